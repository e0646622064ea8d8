"""A tall block put down lying on its side is not taken as placed: the Reflector's success is overruled, so the
run does not claim a success the benchmark's check (the block's bottom on the pad) denies."""

from __future__ import annotations

import math

import sapien

from mallvi.graph.nodes.reflector import toppled
from mallvi.graph.perception_adapter import PipelinePort
from mallvi.graph.schemas import ObjectRef, Plan, SceneMemory, Subtask
from mallvi.perception.pipeline import make_perception
from mallvi.sim_bridge.world import SimWorld


def test_a_bar_lying_on_the_pad_is_toppled_a_bar_standing_on_it_is_not() -> None:
    with SimWorld.create("handover_block", 100005) as world:
        world.settle()
        port = PipelinePort(make_perception("color"))
        first = port.scan(world.observe("head"))
        assert {o.id for o in first} == {"red_block", "blue_pad"}
        subtask = Subtask(text="put the red block on the blue pad", action="place",
                          obj=ObjectRef(phrase="the red block", color="red", label="block"),
                          target=ObjectRef(phrase="the blue pad", color="blue", label="pad"), relation="on")
        state = {"plan": Plan(subtasks=[subtask]), "subtask_index": 0,
                 "scene": SceneMemory(objects=first, initial=first),
                 "bindings": {"red_block": "red_block", "blue_pad": "blue_pad"}}
        pad = world.objects["blue_pad"].entity.get_pose().p
        bar = world.objects["red_block"]
        pad_top = world.table_top_z + world.objects["blue_pad"].size_m[2]
        bar.entity.set_pose(sapien.Pose([pad[0], pad[1], pad_top]))  # standing on the pad
        world.settle()
        assert toppled(state, port.scan(world.observe("head"))) is None  # type: ignore[arg-type]
        lying = [math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0]  # long axis along world x
        bar.entity.set_pose(sapien.Pose([pad[0] - 0.1, pad[1], pad_top + 0.03], q=lying))
        world.settle()
        why = toppled(state, port.scan(world.observe("head")))  # type: ignore[arg-type]
        assert why is not None and "lies on its side" in why
