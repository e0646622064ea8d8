"""Goal predicates and their evaluation over object geometry (simulator truth or a fresh perception pass).

Relations (world frame, metres): ``left_of(a, b)`` means a has the smaller x (the robot's left);
``front_of(a, b)`` means a is closer to the robot (smaller y); ``on(a, b)`` means a rests on b's top face,
centred on it within ``ON_XY_MAX_M``; ``in(a, b)`` means a's centre lies inside b's footprint, below b's rim
(and its base, where its model gives one, ``IN_BASE_BELOW_RIM_M`` below the rim);
``lifted(a)`` means a's bottom is at least ``LIFT_MIN_M`` above the table (``lifted(a, z)``: above world z);
``hung_on(a, b)`` means a is off the table within b's reach, held by no gripper (and a's handle within
``HOOK_TOL_M`` of b's hook, where their models give them); ``held_by(a, arm)`` asks the gripper state.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from mallvi.contracts.world_model import ObjectInfo, WorldModel
from mallvi.graph.posture import LYING_UP_Z, up_cos
from mallvi.graph.schemas import ObjectRef, Predicate, SceneObject

ORDER_MARGIN_M = 0.02
ON_XY_SLACK_M = 0.02
ON_XY_MAX_M = 0.03  # a placement "on" a target is centred to this (a pad, a plate), unless the target is at least
WIDE_TARGET_RATIO = 2.5  # this many times as wide as the object every way (a tray, a board): then anywhere on its top
ON_Z_TOL_M = 0.02
IN_Z_TOL_M = 0.01  # "in": a lying object's bottom at most this far above the rim (a bottle across the rim: 1.7 cm)
IN_BASE_BELOW_RIM_M = 0.01  # ... and its base, where its model gives one, at least this far below the rim
NEAR_M = 0.12
LIFT_MIN_M = 0.03
NEST_RATIO = 0.8  # an object at least this wide as a container nests in it: then it is centred to ON_XY_MAX_M
NEST_UNDER_TOL_M = 0.005  # ... and it is under it, not in it, with its top more than this below the container's
APPENDAGE_OFFSET_M = 0.02  # a container's floor centre this far from its extent's middle: it has a handle (a pan)
IN_BODY_TOL_M = 0.005  # ... and what is in it may stick out of its body's radius this much
IN_BODY_MIDDLE_FRAC = 1 / 3  # ... and its centre lies within this share of the body's radius from the floor centre
HUNG_MIN_M = 0.03  # a hanging object's bottom is at least this far above the table
HOOK_TOL_M = 0.02  # ... and its handle, where its model gives one, this near the hook (across the table)


def wide_target(a: Box, b: Box) -> bool:
    """Whether ``b`` is wide enough to put ``a`` anywhere on its top (a tray, a board; ``WIDE_TARGET_RATIO``)."""
    return min(b.size_m[0], b.size_m[1]) >= WIDE_TARGET_RATIO * max(a.size_m[0], a.size_m[1])


@dataclass(frozen=True)
class Box:
    """An object's centre and axis-aligned extent (metres, world frame).

    What both an ``ObjectInfo`` (simulator truth) and a ``SceneObject`` (perception) reduce to, so that a goal
    predicate is evaluated the same way on either; it stays separate because neither of them is only this."""

    name: str
    centre_m: tuple[float, float, float]
    size_m: tuple[float, float, float]
    #: where something put into it goes (a container's floor centre, when its model says): "in" is judged there
    inner_xy_m: tuple[float, float] | None = None
    #: the z of the object's own base (its frame's origin, bottom centre), when its model says: what "in" holds
    #: below the rim, whichever way the object lies (a bottle head down in a bin, a can standing on the rim)
    base_z: float | None = None
    #: its "handle" and "hook" points, when its model says: "hung_on" holds the handle on the hook
    handle_m: tuple[float, float, float] | None = None
    hook_m: tuple[float, float, float] | None = None
    #: its footprint rectangle in its own frame and that frame's turn about the vertical (rad), when its model
    #: says and it stands upright: "in" holds what is inside its walls, not inside its axis-aligned extent
    footprint_m: tuple[float, float] | None = None
    yaw_rad: float | None = None
    #: where the object's own base is across the table (its frame's origin), when its model says: "in" a pan holds
    #: it there too (a loaf leaning in the pan has its extent's middle nearer the pan's than its base)
    base_xy_m: tuple[float, float] | None = None
    #: its frame's z axis more than 60 degrees off vertical (``posture.LYING_UP_Z``), when its model says: a container
    #: knocked onto its side holds nothing "in" it
    lying: bool = False

    @property
    def bottom_z(self) -> float:
        return self.centre_m[2] - self.size_m[2] / 2

    @property
    def top_z(self) -> float:
        return self.centre_m[2] + self.size_m[2] / 2

    @staticmethod
    def of_info(info: ObjectInfo) -> Box:
        return Box(info.name, centre_of(info), info.size_m)

    @staticmethod
    def of_scene(obj: SceneObject) -> Box:
        floor = obj.points.get("center")
        inner = (floor[0], floor[1]) if floor is not None and floor[2] < obj.position_m[2] else None
        origin = obj.points.get("origin")
        handle, hook = obj.points.get("handle"), obj.points.get("hook")
        upright = None if origin is None else upright_yaw(origin[3:])
        # the footprint in its own rectangle's frame (perception measures it there), else in the model's frame
        yaw = None if upright is None or obj.box_m is None else (
            obj.box_yaw_rad if obj.box_yaw_rad is not None else upright)
        return Box(obj.id, obj.position_m, obj.size_m, inner, None if origin is None else float(origin[2]),
                   None if handle is None else (handle[0], handle[1], handle[2]),
                   None if hook is None else (hook[0], hook[1], hook[2]),
                   None if obj.box_m is None or yaw is None else (obj.box_m[0], obj.box_m[1]), yaw,
                   None if origin is None else (float(origin[0]), float(origin[1])),
                   origin is not None and up_cos(origin[3:]) < LYING_UP_Z)


UPRIGHT_MIN_COS = 0.9  # a frame whose z axis is this near vertical stands upright


def upright_yaw(quat_wxyz: Sequence[float]) -> float | None:
    """The turn (rad) about the vertical of a frame given by its quaternion (w, x, y, z): the heading of its x
    axis; None where its z axis is not near vertical (lying)."""
    if up_cos(quat_wxyz) < UPRIGHT_MIN_COS:
        return None
    w, x, y, z = (float(v) for v in quat_wxyz)
    return math.atan2(2.0 * (x * y + w * z), 1.0 - 2.0 * (y * y + z * z))


def centre_of(info: ObjectInfo) -> tuple[float, float, float]:
    """An object's geometric centre: its "center" point when it has one (the pose origin may be its bottom)."""
    c = info.points.get("center")
    return c.position_m if c is not None else info.pose.position_m


def box_distance_m(info: ObjectInfo, point_world: tuple[float, float, float]) -> float:
    """Distance from ``point_world`` to the object's box (0 inside it): the box is ``size_m`` about its
    "bbox_center" point (else its "center" point, else its pose), turned as the object is."""
    box = info.points.get("bbox_center")
    centre = box.position_m if box is not None else centre_of(info)
    R = (box or info.pose).as_matrix()[:3, :3]
    local = R.T @ (np.asarray(point_world, dtype=float) - np.asarray(centre, dtype=float))
    outside = np.maximum(np.abs(local) - 0.5 * np.asarray(info.size_m, dtype=float), 0.0)
    return float(np.linalg.norm(outside))


class PredicateResult(BaseModel):
    predicate: str
    holds: bool
    detail: str


def _xy_dist(a: Box, b: Box) -> float:
    return float(((a.centre_m[0] - b.centre_m[0]) ** 2 + (a.centre_m[1] - b.centre_m[1]) ** 2) ** 0.5)


def relation_holds(relation: str, a: Box, b: Box | None, table_top_z: float,
                   value_m: float | None = None) -> tuple[bool, str]:
    """Check one geometric relation; returns (holds, a short explanation with the measured numbers)."""
    if relation == "lifted":
        h = a.bottom_z - table_top_z
        if value_m is not None:
            return a.bottom_z > value_m, f"{a.name} bottom at z {a.bottom_z:.3f} m (above {value_m:g} m asked)"
        return h >= LIFT_MIN_M, f"{a.name} bottom {h * 100:.1f} cm above the table"
    if b is None:
        raise ValueError(f"relation {relation!r} needs two objects")
    dx = a.centre_m[0] - b.centre_m[0]
    dy = a.centre_m[1] - b.centre_m[1]
    if relation == "left_of":
        return dx < -ORDER_MARGIN_M, f"x({a.name}) - x({b.name}) = {dx * 100:.1f} cm"
    if relation == "right_of":
        return dx > ORDER_MARGIN_M, f"x({a.name}) - x({b.name}) = {dx * 100:.1f} cm"
    if relation == "front_of":
        return dy < -ORDER_MARGIN_M, f"y({a.name}) - y({b.name}) = {dy * 100:.1f} cm"
    if relation == "behind":
        return dy > ORDER_MARGIN_M, f"y({a.name}) - y({b.name}) = {dy * 100:.1f} cm"
    d = _xy_dist(a, b)
    if relation == "near":
        return d < NEAR_M, f"{a.name}-{b.name} {d * 100:.1f} cm apart"
    if relation == "on":
        gap = a.bottom_z - b.top_z
        ok_xy = d < min(max(b.size_m[0], b.size_m[1]) / 2 + ON_XY_SLACK_M, ON_XY_MAX_M)
        ok_z = abs(gap) < ON_Z_TOL_M
        if wide_target(a, b):
            # a tray: anywhere on its top or inside its rim
            ok_xy = abs(dx) < b.size_m[0] / 2 and abs(dy) < b.size_m[1] / 2
            ok_z = b.bottom_z - ON_Z_TOL_M < a.bottom_z < b.top_z + ON_Z_TOL_M
        return ok_xy and ok_z, f"{a.name} off-centre {d * 100:.1f} cm, gap above {b.name} {gap * 100:.1f} cm"
    if relation == "in":
        if b.lying:
            return False, f"{b.name} lies on its side: nothing is in it"
        if b.inner_xy_m is not None:  # from the container's floor centre (a pan's, not its handle's)
            dx, dy = a.centre_m[0] - b.inner_xy_m[0], a.centre_m[1] - b.inner_xy_m[1]
            d = math.hypot(dx, dy)
        half = (b.size_m[0] / 2, b.size_m[1] / 2)
        lx, ly = dx, dy
        if b.footprint_m is not None and b.yaw_rad is not None:
            # within its walls, in its own frame: a turned box's axis-aligned extent also covers the table by its
            # corners, where a can standing against the box's outside has its centre
            c, sn = math.cos(b.yaw_rad), math.sin(b.yaw_rad)
            lx, ly = c * dx + sn * dy, -sn * dx + c * dy
            half = (b.footprint_m[0] / 2, b.footprint_m[1] / 2)
        ok_xy = abs(lx) < half[0] and abs(ly) < half[1]
        base_note = ""
        if b.inner_xy_m is not None and math.dist(b.inner_xy_m, b.centre_m[:2]) > APPENDAGE_OFFSET_M:
            # a floor centre well off the extent's middle: a body with a handle (a pan), whose radius is the
            # narrower half-extent; the object lies within the body, in its middle third (a pan is filled at its
            # middle, where it balances)
            body_r = min(b.size_m[0], b.size_m[1]) / 2
            ok_xy = (d + min(a.size_m[0], a.size_m[1]) / 2 <= body_r + IN_BODY_TOL_M
                     and d <= IN_BODY_MIDDLE_FRAC * body_r)
            if a.base_xy_m is not None:  # its base in the middle third too
                d_base = math.dist(a.base_xy_m, b.inner_xy_m)
                ok_xy = ok_xy and d_base <= IN_BODY_MIDDLE_FRAC * body_r
                base_note = f", its base {d_base * 100:.1f} cm off the middle"
        nested = max(a.size_m[0], a.size_m[1]) >= NEST_RATIO * min(b.size_m[0], b.size_m[1])
        if nested:  # a bowl in a bowl: centred on it
            ok_xy = d < ON_XY_MAX_M
        # an object lying (lower than long) is seen whole on a rim; an upright one's lower part a wall or an arm
        # may hide, so its bottom seen is held to the looser ON_Z_TOL_M
        lying = a.size_m[2] < max(a.size_m[0], a.size_m[1])
        ok_z = a.bottom_z < b.top_z + (IN_Z_TOL_M if lying else ON_Z_TOL_M)
        above = "" if ok_z else f", its bottom {(a.bottom_z - b.top_z) * 100:.1f} cm above the rim"
        if ok_z and nested and a.top_z < b.top_z - NEST_UNDER_TOL_M:
            # one nested in another stands with its rim at or above the other's: this one is under it
            ok_z = False
            above = f", its top {(b.top_z - a.top_z) * 100:.1f} cm below {b.name}'s: it is under it"
        if ok_z and a.base_z is not None and a.base_z > b.top_z - IN_BASE_BELOW_RIM_M:
            # its lowest part dips below the rim, but its base stands on the rim or above it (on what is inside)
            ok_z = False
            h = a.base_z - b.top_z
            above = (f", its base {h * 100:.1f} cm above the rim" if h >= 0
                     else f", its base only {-h * 100:.1f} cm below the rim")
        return ok_xy and ok_z, f"{a.name} offset ({dx * 100:.1f}, {dy * 100:.1f}) cm from {b.name}{base_note}{above}"
    if relation == "hung_on":
        h = a.bottom_z - table_top_z
        reach = max(b.size_m[0], b.size_m[1]) / 2 + max(a.size_m[0], a.size_m[1])
        ok = h >= HUNG_MIN_M and d <= reach
        text = f"{a.name} bottom {h * 100:.1f} cm above the table, {d * 100:.1f} cm from {b.name}"
        if a.handle_m is not None and b.hook_m is not None:
            # hung by its handle on the hook, not further along the rod (or caught on the rack by its body)
            off = math.dist(a.handle_m[:2], b.hook_m[:2])
            ok = ok and off <= HOOK_TOL_M
            text += f", its handle {off * 100:.1f} cm from the hook"
        return ok, text
    raise ValueError(f"unknown relation {relation!r}")


def evaluate(
    predicates: Sequence[Predicate],
    boxes: Mapping[str, Box],
    table_top_z: float,
    held: Callable[[str], str | None] | None = None,
) -> list[PredicateResult]:
    """Evaluate predicates whose args are keys of ``boxes`` (arms for held_by: "left"/"right").

    ``held(arm)`` returns the key of the object in that arm's gripper, or None.
    """
    out: list[PredicateResult] = []
    for p in predicates:
        text = str(p)
        if p.relation == "held_by":
            obj, arm = p.args[0], p.args[1]
            if held is None:
                out.append(PredicateResult(predicate=text, holds=False, detail="gripper state unknown"))
                continue
            got = held(arm)
            out.append(PredicateResult(predicate=text, holds=got == obj, detail=f"{arm} gripper holds {got}"))
            continue
        missing = [a for a in p.args if a not in boxes]
        if missing:
            out.append(PredicateResult(predicate=text, holds=False, detail=f"not found: {', '.join(missing)}"))
            continue
        a = boxes[p.args[0]]
        b = boxes[p.args[1]] if len(p.args) > 1 else None
        holds, detail = relation_holds(p.relation, a, b, table_top_z, p.value_m)
        if p.relation == "hung_on" and holds and held is not None:
            holder = next((arm for arm in ("left", "right") if held(arm) == p.args[0]), None)
            if holder is not None:
                holds, detail = False, f"{detail}; but the {holder} gripper still holds it"
        out.append(PredicateResult(predicate=text, holds=holds, detail=detail))
    return out


def truth_boxes(refs: Mapping[str, ObjectRef], world: WorldModel) -> tuple[dict[str, Box], dict[str, str]]:
    """Boxes keyed by reference key, resolved independently against the world model's own objects.

    Returns (boxes, errors): a reference that resolves to nothing or to several objects is in ``errors``.
    """
    from mallvi.graph.refs import Candidate, ResolutionError, resolve

    infos = [world.get_object(n) for n in world.object_names()]
    cands = [
        Candidate(i.name, i.label, i.color, i.size_m[0] * i.size_m[1] * i.size_m[2], centre_of(i), i.size_m,
                  box_m=i.size_m)
        for i in infos
    ]
    by_name = {i.name: i for i in infos}
    boxes: dict[str, Box] = {}
    errors: dict[str, str] = {}
    for key, ref in refs.items():
        try:
            c = resolve(ref, cands)
        except ResolutionError as e:
            errors[key] = str(e)
            continue
        info = by_name[c.name]
        boxes[key] = Box(key, centre_of(info), info.size_m)
    return boxes, errors
