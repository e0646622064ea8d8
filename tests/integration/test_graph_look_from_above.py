"""A block no fixed camera sees is found through a wrist camera: the re-scan made because it was lost moves an
empty hand above where it was last seen, looks down, sends the arm home and remembers the block where the picture
shows it; the Grounder and the Projector then take it from that memory."""

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
from mallvi.graph.scene_memory import LOOKED_PREFIX
from mallvi.graph.schemas import ObjectRef, Plan, Predicate, StageError, Subtask
from mallvi.graph.state import initial_state
from mallvi.perception.pipeline import make_perception
from mallvi.sim_bridge.sim_station import SimStation
from mallvi.sim_bridge.world import SimWorld

OUT_OF_HEAD_VIEW_XY = (0.20, -0.33)  # at the table's front edge, below the head camera's image
LAST_SEEN_XY = (0.20, -0.27)  # where the graph last localised it, 6 cm away


def _lost_block(world: SimWorld, ctx: GraphContext) -> dict[str, Any]:
    first = descriptor(initial_state(""), Runtime(context=ctx))["scene"]  # the first scan, with the block in view
    green = first.get("green_block")
    assert green is not None
    subtask = Subtask(text="put the green block on the red block", action="place",
                      obj=ObjectRef(phrase="the green block", color="green", label="block", instance="green_block"),
                      target=ObjectRef(phrase="the red block", color="red", label="block", instance="red_block"),
                      relation="on", post=[Predicate(relation="on", args=["green_block", "red_block"])])
    world.objects["green_block"].entity.set_pose(sapien.Pose([*OUT_OF_HEAD_VIEW_XY, world.table_top_z]))
    world.settle()
    last = green.model_copy(update={"position_m": (*LAST_SEEN_XY, green.position_m[2])})
    return {**initial_state(""), "scene": first, "plan": Plan(subtasks=[subtask]), "subtask_index": 0,
            "bindings": {"green block": "green_block", "red block": "red_block"},
            "localized": {"green_block": last}, "focus": ["green_block", "red_block"],
            "stage_error": StageError(agent="grounder", message="not detected: green_block", lost=True)}


def test_a_block_no_fixed_camera_sees_is_found_from_above_and_taken_from_memory() -> None:
    with SimWorld.create("stack_blocks_two", 3, wrist_cameras=True) as world:
        world.settle()
        station = SimStation(world, main_camera="head", views=())  # no front camera: only the head and wrists
        ctx = build_context(station, PipelinePort(make_perception("color")), rules_backends())
        assert sorted(ctx.wrist_views) == ["left", "right"] and not ctx.extra_views
        state = _lost_block(world, ctx)
        home = world.arms["right"].ee_pose().position_m
        update = descriptor(state, Runtime(context=ctx))  # type: ignore[arg-type]
        found = update["scene"].get("green_block")
        assert found is not None and found.source == LOOKED_PREFIX + "right_wrist", \
            "the right hand, on the block's side, looked"
        truth = world.truth.get_object("green_block").points["center"].position_m
        assert np.linalg.norm(np.asarray(found.position_m[:2]) - np.asarray(truth[:2])) < 0.03
        assert np.linalg.norm(np.asarray(world.arms["right"].ee_pose().position_m) - np.asarray(home)) < 0.01, \
            "the arm is home again after the look"
        assert any("right_wrist" in i for i in update["image_ids"]), "the wrist camera's picture is in the trace"
        state = {**state, **update, "stage_error": None}
        g = grounder(state, Runtime(context=ctx))  # type: ignore[arg-type]
        assert g.get("stage_error") is None, "the block the head camera cannot see is taken from memory"
        p = projector({**state, **g}, Runtime(context=ctx))  # type: ignore[arg-type]
        assert p["localized"]["green_block"].position_m == found.position_m


def test_without_wrist_cameras_a_block_no_fixed_camera_sees_stays_lost() -> None:
    with SimWorld.create("stack_blocks_two", 3) as world:
        world.settle()
        ctx = build_context(SimStation(world, main_camera="head", views=()), PipelinePort(make_perception("color")),
                            rules_backends())
        assert ctx.wrist_views == {}
        state = _lost_block(world, ctx)
        update = descriptor(state, Runtime(context=ctx))  # type: ignore[arg-type]
        assert update["scene"].get("green_block") is None, "lost stays lost: nothing is invented"
