"""A tall object a fault laid on its side, to be put into a container: it is stood up first and set down standing,
then put in by its neck. Taken as it lay, by its body (a bottle 8.3 cm across, the gripper's whole opening), it
stayed between the open fingers above the bin, or was lowered in lying across the rim."""

from __future__ import annotations

import math

from mallvi.contracts.skills import FailureKind
from mallvi.graph.backends.rules.thinker.goal_dispatch import goal_plan
from mallvi.graph.schemas import FailedStep, ObjectRef, SceneMemory, SceneObject, Subtask
from tests.fixtures.graph_fakes import TABLE_Z, FakeWorld, fake_context

STANDING = (0.08, 0.08, 0.24)
LYING = (0.24, 0.08, 0.08)


def _bottle(x: float, size: tuple[float, float, float]) -> SceneObject:
    up = size[2] > size[0]
    q = (1.0, 0.0, 0.0, 0.0) if up else (math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0)  # z -> +x
    down = (0.0, 1.0, 0.0, 0.0)
    neck_z = TABLE_Z + (0.21 if up else 0.04)
    neck = (x, -0.05, neck_z) if up else (x + 0.09, -0.05, neck_z)
    return SceneObject(id="bottle", label="bottle", position_m=(x, -0.05, TABLE_Z + size[2] / 2), size_m=size,
                       points={"origin": (x, -0.05, TABLE_Z, *q), "fp0": (x, -0.05, TABLE_Z, *q),
                               "neck": (*neck, 1.0, 0.0, 0.0, 0.0), "cp4": (*neck, *down)})


def _bin() -> SceneObject:
    return SceneObject(id="bin", label="dustbin", position_m=(-0.38, -0.05, TABLE_Z + 0.04), size_m=(0.2, 0.3, 0.08),
                       points={"opening": (-0.38, -0.05, TABLE_Z + 0.08, 1.0, 0.0, 0.0, 0.0)})


def _into() -> Subtask:
    return Subtask(text="put them into the dustbin", action="place",
                   obj=ObjectRef(phrase="the bottle", label="bottle", instance="bottle"),
                   target=ObjectRef(phrase="the dustbin", label="dustbin", instance="bin"), relation="in")


def _plan(bottle: SceneObject, attempt: int, failed: FailedStep | None = None) -> list[tuple[str, str]]:
    first = _bottle(-0.12, STANDING)
    scene = SceneMemory(objects=[bottle, _bin()], initial=[first, _bin()])
    plan = goal_plan(_into(), bottle, {"bottle": bottle, "bin": _bin()}, scene, fake_context(FakeWorld.blocks()),
                     attempt, failed)
    assert plan is not None
    return [(c.skill, c.arm) for c in plan.calls]


def test_a_bottle_knocked_over_is_stood_up_and_set_down_before_it_goes_in() -> None:
    lying = _bottle(-0.05, LYING)  # where both arms reach
    assert _plan(lying, 0) == [("upright_actor", "left"), ("place_actor", "left"), ("back_to_origin", "left")]
    # the other arm where that one found no way; taken as it lies where neither did
    no_way = FailedStep(skill="upright_actor", arm="left", kind=FailureKind.UNREACHABLE)
    assert _plan(lying, 1, no_way)[0] == ("upright_actor", "right")
    neither = FailedStep(skill="upright_actor", arm="right", kind=FailureKind.UNREACHABLE)
    assert _plan(lying, 2, neither)[0][0] == "grasp_actor"
    # an arm that does not reach it is not asked to
    far_left = _bottle(-0.12, LYING)
    assert _plan(far_left, 1, no_way)[0][0] == "grasp_actor"


def test_the_stood_up_bottle_is_set_down_near_the_robot_from_low() -> None:
    """Held by its top end, a 24 cm bottle put the hand 1.13 m up above the work centre, beyond either arm; only
    near the robot do the arms reach down with it, from 3 cm."""
    first = _bottle(-0.05, STANDING)
    lying = _bottle(-0.05, LYING)
    scene = SceneMemory(objects=[lying, _bin()], initial=[first, _bin()])
    plan = goal_plan(_into(), lying, {"bottle": lying, "bin": _bin()}, scene, fake_context(FakeWorld.blocks()), 0,
                     None)
    assert plan is not None
    place = plan.calls[1]
    assert place.target_pose == [0.0, -0.13, TABLE_Z] and place.args["pre_dis"] == 0.03  # the first relay spot
    assert [v.args["pre_dis"] for v in place.alternatives][:3] == [0.03] * 3
    assert 0.08 in [v.args["pre_dis"] for v in place.alternatives]  # the work centre's spots after them
    assert all(v.target_pose is not None and v.target_pose[2] == TABLE_Z for v in place.alternatives)


def test_a_standing_bottle_goes_straight_in() -> None:
    assert _plan(_bottle(-0.12, STANDING), 0)[0] == ("grasp_actor", "left")


class _Envelope:
    """A reach that covers the points ``covers`` says (a stand-in for one arm's envelope)."""

    def __init__(self, covers: object) -> None:
        self.covers = covers

    def reaches(self, x: float, y: float, height_m: float = 0.0, leaning: bool = False) -> bool:
        return bool(self.covers(x, y))  # type: ignore[operator]


def _at(x: float, y: float) -> SceneObject:
    b = _bottle(x, STANDING)
    dx, dy = x - b.position_m[0], y - b.position_m[1]
    moved = {k: (v[0] + dx, v[1] + dy, *v[2:]) for k, v in b.points.items()}
    return b.model_copy(update={"position_m": (x, y, b.position_m[2]), "points": moved})


def test_a_bottle_only_the_far_arm_reaches_is_relayed_by_it_to_the_arm_at_the_bin() -> None:
    """A miss pushed the bottle past where the left arm (the one that reaches the bin) takes it; the right arm
    stands it in the middle for the left one. Before, the graph said "neither arm reaches into bin" until its
    budget ran out."""
    bottle = _at(-0.02, 0.19)
    ctx = fake_context(FakeWorld.blocks())
    ctx.reach = {"left": _Envelope(lambda x, y: y < 0.15),  # type: ignore[dict-item]
                 "right": _Envelope(lambda x, y: x > -0.1)}
    scene = SceneMemory(objects=[bottle, _bin()], initial=[bottle, _bin()])
    plan = goal_plan(_into(), bottle, {"bottle": bottle, "bin": _bin()}, scene, ctx, 0, None)
    assert plan is not None and plan.strategy.startswith("relay into bin right->left")
    assert [(c.skill, c.arm) for c in plan.calls][:2] == [("grasp_actor", "right"), ("place_actor", "right")]
    # stood 4 cm towards the taker: from the middle (0, -0.13) the left arm took such a bottle leaning, its hand
    # 8-9 cm off the bottle's axis, and then had no way above the bin's front cell
    assert plan.calls[1].target_pose is not None and plan.calls[1].target_pose[:2] == [-0.04, -0.14]


def test_a_bottle_no_arm_reaches_is_brought_within_reach_first() -> None:
    from mallvi.graph.agent_errors import OutOfReachError
    from mallvi.graph.backends.backend_protocols import CallLog
    from mallvi.graph.backends.rules.thinker.thinker import RulesThinker

    bottle = _at(-0.01, 0.2)
    ctx = fake_context(FakeWorld.blocks())
    scene = SceneMemory(objects=[bottle, _bin()], initial=[bottle, _bin()])
    localized = {"bottle": bottle, "bin": _bin()}
    try:
        goal_plan(_into(), bottle, localized, scene, ctx, 0, None)
        raise AssertionError("a plan for a bottle beyond both arms")
    except OutOfReachError as e:
        assert "neither arm reaches bottle at (-0.01, 0.20)" in str(e)
    plan = RulesThinker().think(_into(), localized, scene, 0, None, ctx, CallLog())
    assert plan.strategy is not None and plan.strategy.startswith(("nudge", "pull", "drag")), plan.strategy


def test_a_relay_to_the_right_arm_starts_on_the_right_of_the_middle() -> None:
    bottle = _at(-0.3, -0.05)
    box = _bin().model_copy(update={"position_m": (0.38, -0.05, TABLE_Z + 0.04),
                                    "points": {"opening": (0.38, -0.05, TABLE_Z + 0.08, 1.0, 0.0, 0.0, 0.0)}})
    ctx = fake_context(FakeWorld.blocks())
    ctx.reach = {"left": _Envelope(lambda x, y: x < 0.1),  # type: ignore[dict-item]
                 "right": _Envelope(lambda x, y: x > -0.1)}
    scene = SceneMemory(objects=[bottle, box], initial=[bottle, box])
    plan = goal_plan(_into(), bottle, {"bottle": bottle, "bin": box}, scene, ctx, 0, None)
    assert plan is not None and plan.strategy.startswith("relay into bin left->right"), plan.strategy
    assert plan.calls[1].target_pose is not None and plan.calls[1].target_pose[:2] == [0.04, -0.14]
