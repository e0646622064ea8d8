"""Taking an object up again from a tray after a fault: the grasp stops short where the fingers would reach the
tray's floor, a retry picks among the object's own grasp points, and what already lies on a tray stays there when
the next object goes onto it (place_burger_fries under medium faults spent its budget on all three)."""

from __future__ import annotations

import pytest

from mallvi.contracts.skills import FailureKind
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.rules.thinker.thinker import RAISED_GRASP_M, RulesThinker, clear_first
from mallvi.graph.schemas import ActionPlan, FailedStep, ObjectRef, SceneMemory, SceneObject, SkillCall, Subtask
from tests.fixtures.graph_fakes import TABLE_Z, FakeWorld, fake_context

DOWN_GRASP = [1.0, 0.0, 0.0, 0.0]


def _block(color: str, x: float, y: float, z: float = TABLE_Z + 0.02, grasp_ids: tuple[int, ...] = ()) -> SceneObject:
    points = {f"cp{i}": [x, y, z, *DOWN_GRASP] for i in grasp_ids}
    return SceneObject(id=f"{color}_block", label="block", color=color, position_m=(x, y, z),
                       size_m=(0.04, 0.04, 0.04), points=points)


def _sub(obj: str, target: str, label: str = "block") -> Subtask:
    return Subtask(text=f"put the {obj} on the {target}", action="place",
                   obj=ObjectRef(phrase=f"the {obj}", color=obj.split()[0], label="block"),
                   target=ObjectRef(phrase=f"the {target}", color=None if label == "tray" else target.split()[0],
                                    label=label), relation="on")


def _grasp_args(attempt: int, failed: FailedStep, grasp_ids: tuple[int, ...]) -> tuple[SkillCall, dict[str, object]]:
    green = _block("green", 0.02, -0.05, grasp_ids=grasp_ids)
    red = _block("red", 0.04, -0.1)
    ctx = fake_context(FakeWorld.blocks(("green", 0.02, -0.05), ("red", 0.04, -0.1)))
    plan = RulesThinker().think(_sub("green block", "red block"), {"green_block": green, "red_block": red},
                                SceneMemory(objects=[green, red]), attempt, "grasp_actor failed", ctx, CallLog(),
                                failed=failed)
    grasp = next(c for c in plan.calls if c.skill == "grasp_actor")
    return grasp, dict(grasp.args)


def test_a_grasp_whose_fingers_find_no_reachable_pose_tries_again_stopping_short_of_the_grasp_point() -> None:
    grasp, args = _grasp_args(0, FailedStep(kind=FailureKind.UNREACHABLE, skill="grasp_actor", arm="left"), ())
    assert "grasp_dis" not in args  # the usual grasp first
    assert [v.args for v in grasp.alternatives] == [{"grasp_dis": RAISED_GRASP_M}]
    assert 0.005 <= RAISED_GRASP_M <= 0.015  # short of a 3.8 cm burger's middle, still around its body


@pytest.mark.parametrize("attempt", [2, 3, 4, 5])
def test_a_retry_after_a_slip_grasps_at_one_of_the_objects_own_grasp_points(attempt: int) -> None:
    slipped = FailedStep(kind=FailureKind.NOT_HOLDING, skill="place_actor", arm="right")
    _, args = _grasp_args(attempt, slipped, grasp_ids=(0, 1))
    # the burger has cp0 and cp1 only: "no contact point 2" spent attempts; each retry takes the other one
    assert args["contact_point_id"] == (0, 1)[attempt % 2]


def _tray() -> SceneObject:
    return SceneObject(id="tray", label="tray", position_m=(0.0, -0.1, TABLE_Z + 0.01), size_m=(0.31, 0.21, 0.02))


def _first_moves(sub: Subtask, obj: SceneObject, target: SceneObject, on_it: SceneObject) -> list[str | None]:
    plan = ActionPlan(calls=[SkillCall(skill="grasp_actor", arm="right", object=obj.id)])  # type: ignore[arg-type]
    localized = {o.id: o for o in (obj, target, on_it)}
    out = clear_first(plan, sub, obj, target, localized, SceneMemory(objects=list(localized.values())), TABLE_Z)
    return [c.object for c in out.calls if c.skill == "grasp_actor"]


def test_what_an_earlier_subtask_put_on_a_tray_stays_there_when_the_next_object_goes_onto_it() -> None:
    tray = _tray()
    on_tray = _block("blue", -0.07, -0.12, z=TABLE_Z + 0.02 + 0.02)  # on the tray's left half
    green = _block("green", 0.3, -0.1)
    assert _first_moves(_sub("green block", "tray", "tray"), green, tray, on_tray) == ["green_block"]
    # a block on the target block is still taken off first: nothing can go onto a covered block
    red = _block("red", 0.0, -0.1)
    on_red = _block("blue", 0.0, -0.1, z=TABLE_Z + 0.06)
    assert _first_moves(_sub("green block", "red block"), green, red, on_red) == ["blue_block", "green_block"]
