"""A block pushed out of the head camera's view is found again through the front camera: the Grounder looks there
for what the head camera misses, the Projector localises it in that camera, and a re-scan keeps it in the scene."""

from __future__ import annotations

from typing import Any

import numpy as np
import sapien
from langgraph.runtime import Runtime

from mallvi.graph.assemble import build_context
from mallvi.graph.backends.rules import rules_backends
from mallvi.graph.context import GraphContext
from mallvi.graph.nodes.descriptor import descriptor
from mallvi.graph.nodes.grounder import grounder
from mallvi.graph.nodes.projector import projector
from mallvi.graph.perception_adapter import PipelinePort
from mallvi.graph.schemas import ObjectRef, Plan, Predicate, Subtask
from mallvi.graph.state import initial_state
from mallvi.perception.pipeline import make_perception
from mallvi.sim_bridge.sim_station import SimStation
from mallvi.sim_bridge.world import SimWorld

OUT_OF_HEAD_VIEW_XY = (0.20, -0.33)  # at the table's front edge, below the head camera's image


def _ctx(world: SimWorld, with_front: bool) -> GraphContext:
    station = SimStation(world, main_camera="head", views=None if with_front else ())
    return build_context(station, PipelinePort(make_perception("color")), rules_backends())


def _state(world: SimWorld, ctx: GraphContext) -> dict[str, Any]:
    first = descriptor(initial_state(""), Runtime(context=ctx))["scene"]  # the first scan, with the block in view
    assert "green_block" in {o.id for o in first.objects}
    subtask = Subtask(text="put the green block on the red block", action="place",
                      obj=ObjectRef(phrase="the green block", color="green", label="block"),
                      target=ObjectRef(phrase="the red block", color="red", label="block"), relation="on",
                      post=[Predicate(relation="on", args=["green_block", "red_block"])])
    green = world.objects["green_block"]
    green.entity.set_pose(sapien.Pose([*OUT_OF_HEAD_VIEW_XY, world.table_top_z]))  # a fault pushed it away
    world.settle()
    return {**initial_state(""), "scene": first, "focus": ["green_block", "red_block"],
            "plan": Plan(subtasks=[subtask]), "subtask_index": 0}


def test_a_block_out_of_the_head_view_is_found_and_localised_through_the_front_camera() -> None:
    with SimWorld.create("stack_blocks_two", 3) as world:
        world.settle()
        ctx = _ctx(world, with_front=True)
        state = _state(world, ctx)
        g = grounder(state, Runtime(context=ctx))  # type: ignore[arg-type]
        assert g.get("stage_error") is None, g.get("stage_error")
        assert g["detections"]["green_block"].view == "front" and g["detections"]["red_block"].view == ""
        p = projector({**state, **g}, Runtime(context=ctx))  # type: ignore[arg-type]
        truth = world.truth.get_object("green_block").points["center"].position_m
        found = p["localized"]["green_block"].position_m
        assert np.linalg.norm(np.asarray(found) - np.asarray(truth)) < 0.03
        rescan = descriptor(state, Runtime(context=ctx))["scene"]  # type: ignore[arg-type]
        kept = rescan.get("green_block")
        assert kept is not None and kept.source.endswith("@front")


def test_without_a_second_camera_the_lost_block_is_reported_not_invented() -> None:
    with SimWorld.create("stack_blocks_two", 3) as world:
        world.settle()
        ctx = _ctx(world, with_front=False)
        state = _state(world, ctx)
        g = grounder(state, Runtime(context=ctx))  # type: ignore[arg-type]
        assert "green_block" not in g["detections"]
        assert g["stage_error"].message == "not detected: green_block"


def test_the_reflector_judges_from_the_front_camera_when_the_head_camera_lost_the_block() -> None:
    from mallvi.graph.backends.backend_protocols import CallLog
    from mallvi.graph.backends.rules.reflector import RulesReflector
    from mallvi.graph.schemas import ActorReport

    with SimWorld.create("stack_blocks_two", 3) as world:
        world.settle()
        start = world.objects["green_block"].entity.get_pose()
        verdicts = {}
        for with_front in (True, False):
            world.objects["green_block"].entity.set_pose(start)  # back in view for the first scan
            world.settle()
            ctx = _ctx(world, with_front=with_front)
            state = _state(world, ctx)  # the green block now lies out of the head camera's view
            subtask = state["plan"].subtasks[0]
            report = ActorReport(ok=True, message="all skills succeeded")
            verdicts[with_front] = RulesReflector().reflect(subtask, report, {}, world.observe("head"), ctx, CallLog())
        seen, lost = verdicts[True], verdicts[False]
        assert lost.failure_category == "object_lost" and lost.blamed_agent == "grounder"
        assert seen.verdict == "failure" and seen.failure_category != "object_lost", seen.explanation
        assert "does not hold" in seen.explanation  # it found the block, just not on the red one
