"""Lay-down and re-grasp: the same arm sets the object down in the middle of its reach and takes it again with
another grasp, for a place the arm could not make with the grasp it took.

A ``free`` place keeps the hand's orientation from the grasp down to the target. A block taken at the edge of the
arm's reach is often held with a leaned top-down grasp (the skill leans one only when no upright grasp reaches),
and the leaned hand may find no IK above the target: probed in the simulator, a block at (0.30, -0.20) turned
0.6 rad, taken by the right arm leaned 25°, had no place on a block at (0.12, 0.00); laid down at (0.18, -0.05)
and taken again upright, it was placed. So the object is laid down where the arm reaches best (near
``REACH_SPOTS_M``) and taken again with the grasp the skill picks there, then with each grasp family held fixed:
a block's cp0..cp3 are top-down grasps turned by 90° each, and the skill tries each also turned by 180°, so cp0
and cp1 stand for its two families (the wrist turned by 90°, another IK problem at the target).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mallvi.graph.backends.rules.thinker.strategies import REACH_SPOTS_M
from mallvi.graph.schemas import ActionPlan, SceneObject, SkillCall

REGRASP_CONTACT_POINTS: tuple[int | None, ...] = (None, 1, 0)
"""The grasps tried after the lay-down, in order: the skill's own choice (where the arm reaches well, an upright
grasp instead of a leaned one), then each family (cp1: the fingers turned 90° from cp0). The skill's own choice
is not offered without a lay-down: that is the grasp that failed."""
LAY_DOWN_CLEAR_M = 0.07
"""A lay-down spot keeps this far from every other object and from the place target."""
AT_SPOT_M = 0.05
"""An object this close to the lay-down spot is re-grasped where it lies."""
SPOT_OFFSETS_M = ((0.0, 0.0), (0.0, 0.06), (0.06, 0.0), (-0.06, 0.0), (0.0, -0.06), (0.06, 0.06), (-0.06, 0.06))
"""Candidate lay-down spots around the arm's reach spot, first free one wins."""


def lay_down_spot(arm: str, obj: SceneObject, others: Sequence[SceneObject],
                  target_xy: tuple[float, float]) -> tuple[float, float] | None:
    """A free table spot near the middle of ``arm``'s reach (world frame), or None when none is free."""
    sx, sy = REACH_SPOTS_M[arm]
    taken = [o.position_m[:2] for o in others if o.id != obj.id] + [target_xy]
    for dx, dy in SPOT_OFFSETS_M:
        spot = (sx + dx, sy + dy)
        if all(math.dist(spot, p) > LAY_DOWN_CLEAR_M for p in taken):
            return spot
    return None


def regrasps(carry: ActionPlan, obj: SceneObject, others: Sequence[SceneObject], table_z: float) -> list[ActionPlan]:
    """From ``carry`` (one arm's grasp, place and way home): per family of ``REGRASP_CONTACT_POINTS``, the same arm
    lays the object down near the middle of its reach, takes it again with that family and places it as ``carry``
    did. Empty for a carry that is not a single ``grasp_actor`` followed by a place (an upright grasp of a tall
    object has no families to choose from)."""
    if len(carry.calls) < 2 or carry.calls[0].skill != "grasp_actor" or carry.calls[1].skill != "place_actor":
        return []
    grasp, place = carry.calls[0], carry.calls[1]
    rest = carry.calls[2:]
    target = place.target_pose or []
    if len(target) < 3:
        return []
    arm = grasp.arm
    spot = lay_down_spot(arm, obj, others, (target[0], target[1]))
    if spot is None:
        return []
    ox, oy = obj.position_m[0], obj.position_m[1]
    first: list[SkillCall] = []
    where = f"where it lies ({ox:.2f}, {oy:.2f})"
    if math.dist((ox, oy), spot) > AT_SPOT_M:
        down = place.model_copy(update={"target_pose": [spot[0], spot[1], table_z, *target[3:]]})
        home = SkillCall(skill="back_to_origin", arm=arm)
        first = [grasp.model_copy(update={"args": {k: v for k, v in grasp.args.items() if k != "contact_point_id"}}),
                 down, home]
        where = f"after laying it down at ({spot[0]:.2f}, {spot[1]:.2f})"
    plans = []
    free_args = {k: v for k, v in grasp.args.items() if k != "contact_point_id"}
    for cp in REGRASP_CONTACT_POINTS:
        if cp is None and not first:
            continue
        again = grasp.model_copy(update={"args": free_args if cp is None else {**free_args, "contact_point_id": cp}})
        family = "" if cp is None else f" (cp{cp})"
        how = "the grasp it reaches best" if cp is None else f"grasp family cp{cp}"
        plans.append(ActionPlan(
            calls=[*first, again, place, *rest], strategy=f"lay down and re-grasp {arm}{family}",
            rationale=f"the {arm} arm takes {obj.id} again with {how} {where}, then places it at "
                      f"({target[0]:.3f}, {target[1]:.3f}, {target[2]:.3f})"))
    return plans
