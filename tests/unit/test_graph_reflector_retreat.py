"""An arm that cannot rise clear after letting go does not fail a subtask the scene shows done.

The left arm lowered the last bottle into the bin and let go; its rise above the bin had no inverse-kinematics
solution (nor did its shorter rises), so the attempt ended failed, and with every bottle in the bin the graph spent
its attempts and gave up. The rise, like the way home, only brings the arm back: the scene decides. A failure
before the hand let go still fails the subtask whatever the scene shows."""

from __future__ import annotations

from typing import Any

import pytest

from mallvi.contracts.skills import FailureKind
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.rules.reflector import RulesReflector
from mallvi.graph.backends.rules.thinker.goal_plans import SHORT_DROPS_M, lower_into
from mallvi.graph.schemas import ActorReport, CommandRecord, FailedStep, ObjectRef, SceneObject, Subtask
from tests.fixtures.graph_fakes import FakeWorld, fake_context

SLOT_XY_M = (-0.09, -0.16)


def _cmd(skill: str, ok: bool = True, arm: str = "left", **args: Any) -> CommandRecord:
    return CommandRecord(skill=skill, arm=arm, args=args, ok=ok, message="Action succeeded." if ok else "no IK",
                         kind=None if ok else FailureKind.UNREACHABLE)


def _failed(*commands: CommandRecord) -> ActorReport:
    last = commands[-1]
    return ActorReport(ok=False, message=f"{last.skill} failed: no inverse-kinematics solution",
                       commands=list(commands), failed_stage="thinker",
                       failed_step=FailedStep(kind=FailureKind.UNREACHABLE, skill=last.skill, arm=last.arm))


PLACED = (_cmd("grasp_actor"), _cmd("place_actor", target_pose=[*SLOT_XY_M, 0.74], is_open=False),
          _cmd("move_by_displacement", z=-0.1), _cmd("open_gripper"))


@pytest.mark.parametrize(("commands", "retreat"), [
    ((*PLACED, _cmd("move_by_displacement", ok=False, z=0.12)), True),  # the rise after letting go
    ((*PLACED, _cmd("move_by_displacement", z=0.12), _cmd("back_to_origin", ok=False)), True),  # the way home
    # the rise after a place that let go by itself
    ((_cmd("grasp_actor"), _cmd("place_actor", target_pose=[0, 0, 0.8]), _cmd("move_by_displacement", ok=False,
                                                                             z=0.05)), True),
    ((*PLACED[:2], _cmd("move_by_displacement", ok=False, z=-0.1)), False),  # the lowering, the hand still closed
    ((*PLACED[:1], _cmd("move_by_displacement", ok=False, z=0.05)), False),  # a lift of what the hand holds
    ((*PLACED[:2], _cmd("move_by_displacement", ok=False, z=0.05)), False),  # held above the spot, not let go
    # the other arm let go; this one still holds
    ((*PLACED[:1], _cmd("open_gripper", arm="right"), _cmd("move_by_displacement", ok=False, z=0.05)), False),
    # a sideways move after letting go is more than a way back
    ((*PLACED, _cmd("move_by_displacement", ok=False, x=0.05)), False),
])
def test_which_failed_call_is_only_the_way_back(commands: tuple[CommandRecord, ...], retreat: bool) -> None:
    assert _failed(*commands).only_retreat_failed() is retreat


def test_a_report_that_did_not_fail_is_not_a_failed_retreat() -> None:
    assert not ActorReport(ok=True, message="all skills succeeded", commands=list(PLACED)).only_retreat_failed()


def _judge(report: ActorReport, at_xy: tuple[float, float]) -> tuple[str, str]:
    w = FakeWorld.blocks(("red", *at_xy))
    before = {"red_block": SceneObject(id="red_block", label="block", color="red",
                                       position_m=(SLOT_XY_M[0] - 0.1, SLOT_XY_M[1], 0.76), size_m=(0.04, 0.04, 0.04))}
    subtask = Subtask(text="place the red block in slot 0", action="place", relation="slot", slot=0,
                      obj=ObjectRef(phrase="the red block", color="red", label="block"))
    v = RulesReflector().reflect(subtask, report, before, w.observe(), fake_context(w), CallLog())
    return v.verdict, v.explanation


def test_a_failed_rise_after_letting_go_is_judged_by_the_scene() -> None:
    rise_failed = _failed(*PLACED, _cmd("move_by_displacement", ok=False, z=0.12))
    verdict, why = _judge(rise_failed, SLOT_XY_M)
    assert verdict == "success" and "did not rise clear after letting go" in why
    verdict, why = _judge(rise_failed, (SLOT_XY_M[0] + 0.08, SLOT_XY_M[1]))  # let go, but not in its slot
    assert verdict == "failure" and "move_by_displacement failed" in why and "from its target" in why


def test_a_failed_lowering_fails_the_subtask_whatever_the_scene_shows() -> None:
    verdict, why = _judge(_failed(*PLACED[:2], _cmd("move_by_displacement", ok=False, z=-0.1)), SLOT_XY_M)
    assert verdict == "failure" and why.startswith("move_by_displacement failed")


def test_lowering_into_a_container_lets_go_higher_where_the_arm_cannot_reach_down() -> None:
    can = SceneObject(id="can", label="can", position_m=(0.1, -0.2, 0.8), size_m=(0.066, 0.066, 0.12))
    calls = lower_into("right", can, (0.0, -0.18), floor_z=0.745, rim_z=0.82)
    lowering = calls[1]
    assert (lowering.skill, lowering.args["z"]) == ("move_by_displacement", pytest.approx(-(0.835 - 0.75)))
    drops = [float(v.args["z"] or 0.0) for v in lowering.alternatives]
    assert drops == pytest.approx([-(0.085 - s) for s in SHORT_DROPS_M])
    assert all(-0.085 < d <= -0.01 for d in drops)  # every variant still goes down, less far
    shallow = lower_into("right", can, (0.0, -0.18), floor_z=0.745, rim_z=0.80)  # a 6.5 cm lowering
    assert [v.args["z"] for v in shallow[1].alternatives] == [pytest.approx(-0.035)]  # not one of 0.5 cm
    assert [c.skill for c in calls[2:]] == ["open_gripper", "move_by_displacement", "back_to_origin"]
