"""Whole-plan motion check: every target of a subtask's calls is checked before the first call moves anything.

Each arm's grasp-centre position is followed through the plan (world frame, metres): it starts where the arm is
now, a grasp ends at the object's centre, a ``place_actor`` passes its pre-place point (``pre_dis`` above the
placed object) and its descent point (``dis`` above), displacements add up, ``move_to_pose`` goes to its
target, and ``back_to_origin`` (or ``upright_actor``, which ends wherever the arm can lift) leaves the position
unknown until the next absolute target. Every position so reached must be finite, above the table top and inside
the workspace; a call that breaks this is named in the refusal and nothing moves.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from mallvi.graph.schemas import SceneObject, SkillCall

if TYPE_CHECKING:
    from mallvi.graph.context import GraphContext

TABLE_MARGIN_M = 0.005
Xyz = tuple[float, float, float]


def point_violation(what: str, xyz: Sequence[float], ctx: GraphContext) -> str | None:
    """Why a target point must not be reached (non-finite, below the table top, outside the workspace), or None."""
    try:
        p = [float(v) for v in xyz[:3]]
    except (TypeError, ValueError):
        return f"{what} {list(xyz)!r} is not numeric"
    if len(p) < 3 or not all(math.isfinite(v) for v in p):
        return f"{what} {list(xyz)!r} needs 3 finite numbers"
    where = "(" + ", ".join(f"{v:.3f}" for v in p) + ")"
    if p[2] < ctx.table_top_z - TABLE_MARGIN_M:
        return f"{what} {where} is below the table top z={ctx.table_top_z:.3f}"
    if ctx.workspace_m is not None:
        lo, hi = ctx.workspace_m
        if any(v < a or v > b for v, a, b in zip(p, lo, hi, strict=True)):
            return f"{what} {where} is outside the workspace {list(lo)}..{list(hi)}"
    return None


def _num(args: Mapping[str, object], key: str, default: float) -> float | None:
    v = args.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(float(v)) else None


def _start(ctx: GraphContext, arm: str) -> Xyz | None:
    """Where ``arm``'s end effector is now (None when the driver cannot say)."""
    try:
        r = ctx.skills.get_arm_pose(arm)  # type: ignore[arg-type]
        pose = r.data.get("pose") if r.ok else None
        if pose is None:
            return None
        x, y, z = (float(v) for v in list(pose)[:3])
    except Exception:  # a driver that cannot report its pose: displacements from here are checked by the guard
        return None
    if point_violation("start", (x, y, z), ctx) is not None:
        return None  # e.g. a home pose outside the target box: the guard judges moves from there
    return (x, y, z)


def plan_violation(calls: Sequence[SkillCall], ctx: GraphContext,
                   localized: dict[str, SceneObject]) -> tuple[int, str] | None:
    """The first call (its index) with a target that must not be reached, and why (naming the call and the
    target), or None when every target of the plan is allowed."""
    pos: dict[str, Xyz | None] = {}
    for i, call in enumerate(calls):
        if call.arm not in pos:
            pos[call.arm] = _start(ctx, call.arm)
        bad = _step(f"call {i + 1} ({call.skill}, {call.arm} arm)", call, ctx, localized, pos)
        if bad is not None:
            return i, bad
    return None


def _step(name: str, call: SkillCall, ctx: GraphContext, localized: dict[str, SceneObject],
          pos: dict[str, Xyz | None]) -> str | None:
    """Check one call's targets and move its arm's tracked position (``pos``) to where the call leaves it.

    Every alternative of the call is checked the same way from the same start; the position it leaves is the
    call's own (an alternative that runs leaves the arm near it)."""
    for k, v in enumerate(call.alternatives):
        alt = call.variant(v)
        bad = _step(f"{name}, alternative {k + 1}", alt, ctx, localized, dict(pos))
        if bad is not None:
            return bad
    if call.skill == "execute_ee_action":
        t = call.target_pose or []
        if len(t) != 16:
            return f"{name}: an end-effector action takes 16 numbers, got {len(t)}"
        for side, xyz in (("left", t[0:3]), ("right", t[8:11])):
            bad = point_violation(f"{name}: the {side} arm's target", xyz, ctx)
            if bad is not None:
                return bad
            pos[side] = (float(xyz[0]), float(xyz[1]), float(xyz[2]))
        return None
    if call.target_pose:
        bad = point_violation(f"{name}: target", call.target_pose, ctx)
        if bad is not None:
            return bad
    obj = localized.get(call.object) if call.object else None
    if call.skill == "grasp_actor" and obj is not None:
        pos[call.arm] = (obj.position_m[0], obj.position_m[1], obj.position_m[2])
    elif call.skill in ("upright_actor", "back_to_origin"):
        pos[call.arm] = None
    elif call.skill == "move_to_pose" and call.target_pose:
        t = call.target_pose
        pos[call.arm] = (float(t[0]), float(t[1]), float(t[2]))
    elif call.skill == "place_actor" and call.target_pose:
        pre, dis = _num(call.args, "pre_dis", 0.1), _num(call.args, "dis", 0.02)
        if pre is None or dis is None:
            return (f"{name}: pre_dis and dis must be finite numbers, got {call.args.get('pre_dis')!r}, "
                    f"{call.args.get('dis')!r}")
        half_h = obj.size_m[2] / 2 if obj is not None else 0.0
        x, y, z = (float(v) for v in call.target_pose[:3])
        for what, dz in (("pre-place point", pre), ("descent point", dis)):
            bad = point_violation(f"{name}: its {what}", (x, y, z + half_h + dz), ctx)
            if bad is not None:
                return bad
        pos[call.arm] = (x, y, z + half_h + pre)
    elif call.skill == "move_by_displacement":
        d = [_num(call.args, k, 0.0) for k in ("x", "y", "z")]
        if any(v is None for v in d):
            return f"{name}: the displacement {[call.args.get(k) for k in ('x', 'y', 'z')]!r} is not finite"
        cur = pos.get(call.arm)
        if cur is not None:
            nxt = (cur[0] + (d[0] or 0.0), cur[1] + (d[1] or 0.0), cur[2] + (d[2] or 0.0))
            bad = point_violation(f"{name}: the target the displacements add up to", nxt, ctx)
            if bad is not None:
                return bad
            pos[call.arm] = nxt
    return None
