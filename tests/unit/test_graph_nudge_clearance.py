"""A push's hand comes down clear of the object it pushes: beside a tall object the palm, not only the fingers.

handover_block's standing bar (0.20 m) reaches above the palm while the fingers push at its foot. The closed fingers
came down 4 cm from its side with the palm (0.11 m long along the fingers) still over it, and in the simulator the
descent threw the bar off the table (three of handover_block's hard failures on development seeds 16000-17019)."""

from __future__ import annotations

import math

import pytest

from mallvi.graph.backends.rules.thinker.strategies import (
    EE_ABOVE_GRASP_CENTRE_M,
    NUDGE_M,
    PALM_ABOVE_GRASP_CENTRE_M,
    PALM_HALF_M,
    finger_path,
    nudge,
)
from mallvi.graph.schemas import ActionPlan, SceneMemory, SceneObject

TABLE_Z = 0.7357


def _bar(x: float, y: float, height_m: float) -> SceneObject:
    return SceneObject(id="red_block", label="block", color="red", position_m=[x, y, TABLE_Z + height_m / 2],
                       size_m=[0.06, 0.06, height_m])


def _descent(plan: ActionPlan) -> tuple[float, float, float]:
    """Where the hand's grasp centre is when the straight descent ends: (x, y, z), world frame."""
    start = plan.calls[1].target_pose
    assert start is not None
    down = plan.calls[2].args["z"]
    return start[0], start[1], start[2] + down - EE_ABOVE_GRASP_CENTRE_M


def _palm_overlaps(obj: SceneObject, plan: ActionPlan) -> bool:
    """Whether the palm's footprint (fingers along world x), at the height it comes down to, meets ``obj``'s box."""
    x, y, z = _descent(plan)
    palm_bottom = z + PALM_ABOVE_GRASP_CENTRE_M
    if palm_bottom >= obj.position_m[2] + obj.size_m[2] / 2:
        return False
    return (abs(x - obj.position_m[0]) < PALM_HALF_M[0] + obj.size_m[0] / 2
            and abs(y - obj.position_m[1]) < PALM_HALF_M[1] + obj.size_m[1] / 2)


@pytest.mark.parametrize(("arm", "x", "y"), [("left", -0.29, -0.07), ("left", -0.22, -0.03), ("right", 0.28, -0.05),
                                             ("right", 0.0, -0.15)])
def test_beside_a_standing_bar_the_palm_comes_down_clear_of_it(arm: str, x: float, y: float) -> None:
    bar = _bar(x, y, 0.20)
    plan = nudge(arm, bar, SceneMemory(objects=[bar]), {"red_block": bar}, TABLE_Z, arm)
    assert not _palm_overlaps(bar, plan), plan.calls[1].target_pose


def test_the_palm_leading_a_push_still_moves_the_object_by_the_nudge() -> None:
    bar = _bar(-0.29, -0.07, 0.20)
    plan = nudge("left", bar, SceneMemory(objects=[bar]), {"red_block": bar}, TABLE_Z, "left")
    x, y, _ = _descent(plan)
    push = plan.calls[3].args
    ux, uy = push["x"], push["y"]
    n = math.hypot(ux, uy)
    lead = abs(ux / n) * PALM_HALF_M[0] + abs(uy / n) * PALM_HALF_M[1]
    gap = math.hypot(x - bar.position_m[0], y - bar.position_m[1]) - 0.03 - lead  # palm edge to the bar's side
    assert gap > 0
    assert n - gap == pytest.approx(NUDGE_M, abs=0.01)


def test_a_low_block_is_pushed_by_the_fingers_from_as_close_as_before() -> None:
    block = _bar(0.10, -0.05, 0.05)
    plan = nudge("right", block, SceneMemory(objects=[block]), {"red_block": block}, TABLE_Z, "right")
    x, y, _ = _descent(plan)
    assert math.hypot(x - 0.10, y + 0.05) == pytest.approx(0.03 + 0.04, abs=1e-6)
    start, end = finger_path(block, (1.0, 0.0), TABLE_Z)
    assert end[0] - start[0] == pytest.approx(0.04 + NUDGE_M)
