"""The second look for a lost object: hands that hold something go home, then a wrist camera looks from above.

An arm holding an object up over the table (a basket lifted, a can carried) can hide what lies under or behind it
from every fixed camera, and an object that fell behind a container is hidden from them all. When a re-scan made
because an object was lost still misses it, ``clear_view`` sends each arm whose gripper senses an object home,
keeping its grip, and the scene is looked at again. If that does not find it either, ``look_from_above`` moves an
empty hand that carries a wrist camera over the spots where the object was last known, looking straight down, and
takes a picture at each; the arm then goes home. Every motion goes through the skills (and so through the safety
guard) and reaches the trace as an ``actor_command`` marked ``clear_view`` or ``look``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mallvi.contracts.geometry import ARM_SIDES, ArmSide
from mallvi.contracts.observation import Observation
from mallvi.contracts.skills import FailureKind, SkillResult
from mallvi.contracts.station import wrist_camera
from mallvi.graph.context import GraphContext
from mallvi.graph.plan_motion import point_violation

LOOK_ABOVE_TABLE_M = 0.35
"""The hand's height above the table top for a look: its height at home, where the wrist camera (45 deg vertical
field of view) sees about 0.5 x 0.3 m of the table. In the simulator 8 cm lower had no IK over the middle."""
LOOK_EE_WXYZ = (0.5, -0.5, 0.5, 0.5)
"""The hand pointing straight down (its approach axis along world -z): the wrist camera looks down with it."""
SPOTS_APART_M = 0.10  # two spots nearer than this are looked at once
MAX_SPOTS = 2


def _run(ctx: GraphContext, arm: ArmSide, mark: str, pose: list[float] | None = None) -> SkillResult:
    """The arm to ``pose`` (``move_to_pose``), or home without one, with its trace event; a driver fault is a
    failed result, never a raise."""
    skill = "back_to_origin" if pose is None else "move_to_pose"
    try:
        r = ctx.skills.back_to_origin(arm) if pose is None else ctx.skills.move_to_pose(arm, pose)
    except Exception as e:  # a sensor or driver fault: the arm stays where it is, the look goes on without it
        r = SkillResult.failure(f"{type(e).__name__}: {e}", FailureKind.DEVICE_FAULT)
    args: dict[str, object] = {mark: True} if pose is None else {mark: True, "target_pose": pose}
    ctx.emit("actor_command", arm=arm, skill=skill, args=args, ok=r.ok, message=r.message)
    return r


def _senses(ctx: GraphContext, arm: ArmSide) -> bool | None:
    """The gripper's own "something is between the fingers" sensor; None without one."""
    if ctx.gripper_holding is None:
        return None
    try:
        return bool(ctx.gripper_holding(arm))
    except Exception:  # a sensor fault: treated as unknown
        return None


def clear_view(ctx: GraphContext) -> list[ArmSide]:
    """Send home every arm whose gripper senses something; returns the arms that got there.

    Nothing moves without the gripper's own sensor (``ctx.gripper_holding``): which arms hold something is
    otherwise a guess, and a guess does not move an arm."""
    return [arm for arm in ARM_SIDES if _senses(ctx, arm) and _run(ctx, arm, "clear_view").ok]


def look_spots(points_xy: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The first ``MAX_SPOTS`` of ``points_xy`` at least ``SPOTS_APART_M`` apart, in order."""
    spots: list[tuple[float, float]] = []
    for p in points_xy:
        if len(spots) < MAX_SPOTS and all(math.dist(p, s) >= SPOTS_APART_M for s in spots):
            spots.append(p)
    return spots


def look_from_above(ctx: GraphContext, spots_xy: Sequence[tuple[float, float]]) -> list[tuple[str, Observation]]:
    """A picture through a wrist camera above each spot: the empty hand on the spot's side goes there (the other
    one where it cannot), the camera looks down, the arm goes home. Returns (camera name, frame) per picture taken;
    none without wrist cameras or the gripper sensor (a hand that may hold something is not moved). A look whose
    target a plan's check would refuse (``plan_motion.point_violation``: outside the workspace, below the table) is
    traced as refused and not made."""
    pictures: list[tuple[str, Observation]] = []
    for x, y in spots_xy:
        pose = [x, y, ctx.table_top_z + LOOK_ABOVE_TABLE_M, *LOOK_EE_WXYZ]
        near: ArmSide = "left" if x < 0 else "right"
        for arm in sorted(ctx.wrist_views, key=lambda a: a != near):
            if _senses(ctx, arm) is not False:
                continue
            refused = point_violation("look target", pose, ctx)  # checked as a plan's targets are
            if refused is not None:
                ctx.emit("actor_command", arm=arm, skill="move_to_pose", args={"look": True, "target_pose": pose},
                         ok=False, message=f"not made: {refused}")
                break
            there = _run(ctx, arm, "look", pose)
            if there.ok:
                try:
                    pictures.append((wrist_camera(arm), ctx.wrist_views[arm]()))
                except Exception as e:  # a camera fault: this look is lost, the arm still goes home
                    ctx.emit("actor_command", arm=arm, skill="observe", args={"look": True}, ok=False,
                             message=f"{type(e).__name__}: {e}")
            _run(ctx, arm, "look")
            if there.ok:
                break
    return pictures
