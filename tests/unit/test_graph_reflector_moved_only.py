"""A push, pull or topple that ran without a failure does not complete a subtask that puts an object in a slot.

On development seed 17004 (blocks_ranking_rgb, hard) the left arm nudged the red block 6 cm back into its reach:
every call succeeded, the row's slot check needs a place target, and the nudge had none, so the subtask was taken as
done with the block 4.6 cm from its slot. The run ended "succeeded" and failed the benchmark's row check."""

from __future__ import annotations

from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.rules.reflector import RulesReflector
from mallvi.graph.schemas import ActorReport, CommandRecord, ObjectRef, SceneObject, Subtask
from tests.fixtures.graph_fakes import FakeWorld, fake_context

SLOT_XY_M = (-0.09, -0.16)


def _slot_subtask() -> Subtask:
    return Subtask(text="place the red block in slot 0", action="place", relation="slot", slot=0,
                   obj=ObjectRef(phrase="the red block", color="red", label="block"))


def _report(*skills: str, target: list[float] | None = None) -> ActorReport:
    return ActorReport(ok=True, message="all skills succeeded", commands=[
        CommandRecord(skill=s, arm="left", args={"target_pose": target} if s == "place_actor" else {}, ok=True,
                      message="Action succeeded.") for s in skills])


def _judge(report: ActorReport, at_xy: tuple[float, float]) -> tuple[str, str | None, str]:
    w = FakeWorld.blocks(("red", *at_xy))
    ctx = fake_context(w)
    before = {"red_block": SceneObject(id="red_block", label="block", color="red",
                                       position_m=(at_xy[0] - 0.06, at_xy[1], 0.76), size_m=(0.04, 0.04, 0.04))}
    v = RulesReflector().reflect(_slot_subtask(), report, before, w.observe(), ctx, CallLog())
    return v.verdict, v.failure_category, v.explanation


def test_a_nudge_that_ran_is_not_a_placed_block() -> None:
    nudge = _report("close_gripper", "move_to_pose", "move_by_displacement", "move_by_displacement",
                    "move_by_displacement", "back_to_origin", "open_gripper")
    verdict, category, why = _judge(nudge, (-0.136, -0.138))
    assert (verdict, category) == ("failure", "wrong_placement")
    assert "not yet put in its place" in why


def test_a_place_in_the_slot_still_succeeds_and_one_beside_it_still_fails() -> None:
    target = [*SLOT_XY_M, 0.74]
    carry = ("grasp_actor", "place_actor", "back_to_origin")
    assert _judge(_report(*carry, target=target), SLOT_XY_M)[0] == "success"
    verdict, category, why = _judge(_report(*carry, target=target), (-0.136, -0.138))
    assert (verdict, category) == ("failure", "wrong_placement") and "from its target" in why
