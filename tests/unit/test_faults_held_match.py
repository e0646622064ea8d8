"""A block already in the gripper is partly hidden by the fingers: the Actor still binds it to its robot-side name."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mallvi.graph.nodes.actor import actor
from mallvi.graph.schemas import ActionPlan, SceneObject, SkillCall
from mallvi.graph.state import initial_state
from tests.fixtures.graph_fakes import TABLE_Z, FakeWorld, fake_context

PAD = [0.12, 0.03, TABLE_Z + 0.01, 1.0, 0.0, 0.0, 0.0]


def _run(world: FakeWorld, calls: list[SkillCall]) -> dict[str, Any]:
    ctx = fake_context(world)  # the fake Station's grippers sense what ``world.held`` says
    seen = world.objects["red_block"].pos
    # the perceived centre is 6 cm off, as for a block between the fingers seen past the gripper
    perceived = SceneObject(id="red_block", label="block", color="red",
                            position_m=(seen[0] - 0.04, seen[1] - 0.04, seen[2] + 0.01), size_m=(0.04,) * 3)
    state: Any = {**initial_state(""), "action_plan": ActionPlan(calls=calls, rationale="test"),
                  "localized": {"red_block": perceived}}
    return actor(state, Runtime(context=ctx))


def _place() -> list[SkillCall]:
    return [SkillCall(skill="place_actor", arm="right", object="red_block", target_pose=PAD)]


def test_a_held_block_seen_off_centre_is_placed_by_the_arm_holding_it() -> None:
    world = FakeWorld.blocks(("red", 0.1, 0.0), ("green", -0.2, 0.0))
    world.held["right"] = "red_block"
    out = _run(world, _place())
    assert out["actor_report"].ok, out["actor_report"].message
    assert world.calls[0][:2] == ("place_actor", "right") and world.calls[0][2][0] == "red_block"


def test_without_a_held_object_the_same_offset_is_a_perception_failure() -> None:
    world = FakeWorld.blocks(("red", 0.1, 0.0), ("green", -0.2, 0.0))
    out = _run(world, _place())
    assert not out["actor_report"].ok and world.calls == []
    assert "no object within 3 cm of perceived red_block" in out["actor_report"].message


def test_a_grasp_of_an_off_centre_block_keeps_the_tight_radius_even_when_the_gripper_holds_something() -> None:
    world = FakeWorld.blocks(("red", 0.1, 0.0), ("green", -0.2, 0.0))
    world.held["right"] = "green_block"
    calls = [SkillCall(skill="grasp_actor", arm="right", object="red_block"), *_place()]
    out = _run(world, calls)
    assert not out["actor_report"].ok and world.calls == []
    assert out["actor_report"].failed_stage == "grounder"
