"""The rules Thinker in the fine tier's action space: 16-number end-effector actions moving both arms at once.

Every action is ``[left xyz, left quaternion wxyz, left gripper, right xyz, right quaternion wxyz, right gripper]``
(gripper 1 open, 0 closed). The end-effector frame is the grasp frame's (x = approach, y = finger opening), 0.12 m
behind the point where the fingers close. An arm that has nothing to do keeps its last commanded pose.

The geometry is the same the primitive planners use: an object's grasp frames ("cpN"), its frame ("origin") and
bottom point ("fp0"), and a target's top, floor, drop points or the work centre. A grasp is reached from
``PRE_GRASP_M`` behind along its approach, closed in place and lifted; a place moves the object (held as it was
taken) over its target, lowers it to ``RELEASE_M`` above it, opens, and rises.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

from mallvi.graph.agent_errors import AgentError
from mallvi.graph.backends.rules.thinker import features as ft
from mallvi.graph.backends.rules.thinker import goal_plans as gp
from mallvi.graph.goals import APPENDAGE_OFFSET_M
from mallvi.graph.ports import AgentContext
from mallvi.graph.posture import first_seen
from mallvi.graph.schemas import ActionPlan, CallVariant, SceneMemory, SceneObject, SkillCall, Subtask

TCP_M = 0.12  # the end effector sits this far behind the grasp centre, along the approach
PRE_GRASP_M = 0.10
LIFT_M = 0.10
CARRY_M = 0.10  # a carried object's bottom passes this far above its target before it is lowered
RELEASE_M = 0.015  # ... and is let go this far above it
RETREAT_M = 0.08
HOLD_UP_M = 0.04  # a container held to receive something: its bottom this far above the table
OPEN, CLOSED = 1.0, 0.0
ARMS = ("left", "right")


def _pose(T: np.ndarray) -> list[float]:
    x, y, z, w = Rotation.from_matrix(T[:3, :3]).as_quat()
    return [float(T[0, 3]), float(T[1, 3]), float(T[2, 3]), float(w), float(x), float(y), float(z)]


def _matrix(pose: Sequence[float]) -> np.ndarray:
    T = np.eye(4)
    w, x, y, z = pose[3:7]
    T[:3, :3] = Rotation.from_quat([x, y, z, w]).as_matrix()
    T[:3, 3] = pose[:3]
    return T


def _frame_of(pose7: Sequence[float]) -> np.ndarray:
    return _matrix(pose7)


@dataclass
class Hands:
    """Both arms' commanded poses and grippers; ``act`` records one action with the changes given."""

    pose: dict[str, list[float]]
    grip: dict[str, float]
    actions: list[list[float]] = field(default_factory=list)
    alternatives: dict[int, list[list[float]]] = field(default_factory=dict)  # action index -> other actions

    @staticmethod
    def now(ctx: AgentContext) -> Hands:
        pose: dict[str, list[float]] = {}
        grip: dict[str, float] = {}
        for arm in ARMS:
            r = ctx.skills.get_arm_pose(arm)  # type: ignore[arg-type]
            if not r.ok or "pose" not in r.data:
                raise AgentError(f"the {arm} arm's end-effector pose is not known: {r.message}")
            pose[arm] = [float(v) for v in r.data["pose"]]
            grip[arm] = float(ctx.gripper_opening(arm)) if ctx.gripper_opening is not None else OPEN  # type: ignore[arg-type]
        return Hands(pose, grip)

    def act(self, **moves: tuple[list[float] | None, float | None]) -> None:
        for arm, (pose, grip) in moves.items():
            if pose is not None:
                self.pose[arm] = list(pose)
            if grip is not None:
                self.grip[arm] = grip
        self.actions.append([*self.pose["left"], self.grip["left"], *self.pose["right"], self.grip["right"]])

    def calls(self, arm: str, obj: str | None) -> list[SkillCall]:
        return [SkillCall(skill="execute_ee_action", arm=arm, object=obj, target_pose=a,  # type: ignore[arg-type]
                          alternatives=[CallVariant(target_pose=b) for b in self.alternatives.get(i, [])])
                for i, a in enumerate(self.actions)]


HELD_NEAR_M = 0.10  # a gripper holding something whose grasp centre is this close to an object holds that object


def _box_gap_m(obj: SceneObject, point: np.ndarray) -> float:
    """How far ``point`` lies outside the object's extent (0 inside it)."""
    half = np.asarray(obj.size_m) / 2
    return float(np.linalg.norm(np.maximum(np.abs(point - np.asarray(obj.position_m)) - half, 0.0)))


def holder_of(obj: SceneObject, ctx: AgentContext, others: Sequence[SceneObject] = ()) -> str | None:
    """The arm whose gripper senses something between its fingers, with its grasp centre within ``HELD_NEAR_M`` of
    ``obj``'s extent and no nearer another of ``others`` (a loaf lying by the hand that holds the pan is not held)."""
    if ctx.gripper_holding is None:
        return None
    for arm in ARMS:
        if not ctx.gripper_holding(arm):  # type: ignore[arg-type]
            continue
        r = ctx.skills.get_arm_pose(arm)  # type: ignore[arg-type]
        if not r.ok or "pose" not in r.data:
            continue
        T = _matrix([float(v) for v in r.data["pose"]])
        centre = T[:3, 3] + TCP_M * T[:3, 0]
        gap = _box_gap_m(obj, centre)
        if gap <= HELD_NEAR_M and all(_box_gap_m(o, centre) >= gap for o in others if o.id != obj.id):
            return arm
    return None


def busy_hands(ctx: AgentContext, held_by: str | None) -> set[str]:
    """The arms whose grippers hold something other than the object held by ``held_by`` (if any)."""
    if ctx.gripper_holding is None:
        return set()
    return {a for a in ARMS if a != held_by and ctx.gripper_holding(a)}  # type: ignore[arg-type]


#: without grasp frames: (quarter turns about the vertical from the object's yaw, lean of the approach in rad)
FRAMELESS_GRASPS = ((0, 0.0), (1, 0.0), (0, 0.5), (0, -0.5), (1, 0.5), (1, -0.5))
FRAMELESS_WIDTH_MAX_M = 0.07  # ... added after the model's own frames only to an object at most this narrow


STEEP_Z = -0.7  # a grasp approaching more steeply than this (the z part of its unit approach) is kept as it is


def grasp_frames(obj: SceneObject, first: SceneObject | None = None) -> list[tuple[int | None, np.ndarray]]:
    """The object's grasp frames (4x4, world) top-down ones first, then across a pan's wall (``_across_wall``)
    and along its handle nearer the body (``_along_handles``), then grasps 1.5 cm below its top: top-down
    across either pair of faces, then leaning (``FRAMELESS_GRASPS``; the only ones without grasp frames, else
    only for an object at most ``FRAMELESS_WIDTH_MAX_M`` across). A frame from below, level or slanted less
    steeply than ``STEEP_Z`` is turned down about its handle's axis where the object rolled about it since
    ``first`` (``_turned_down``); else one from below is left out."""
    frames: list[tuple[int | None, np.ndarray]] = []
    for g in sorted(ft.grasps(obj), key=lambda g: (not g.top_down, g.cp)):
        T = _frame_of(obj.points[f"cp{g.cp}"])
        if g.approach_m[2] > STEEP_Z:  # turned down about a handle's axis, where it rolled about it; never from below
            cp_first = first.points.get(f"cp{g.cp}") if first is not None else None
            turned = _turned_down(T, _frame_of(cp_first) if cp_first is not None else None)
            if turned is None and g.approach_m[2] > 0.3:
                continue
            T = turned if turned is not None else T
        frames.append((g.cp, T))
        frames.append((g.cp, _flipped(T)))  # a parallel gripper holds the same way turned half round
    frames += _across_wall(obj) + _along_handles(obj)
    # then (the only ones without grasp frames) top-down across either pair of faces, and leaning either way
    # across the fingers, on an object narrow enough for the fingers
    box = obj.box_m or obj.size_m
    if frames and min(box[:2]) > FRAMELESS_WIDTH_MAX_M:
        return _distinct(frames)
    for quarter, lean in FRAMELESS_GRASPS:
        yaw = ft.yaw_rad(obj) + quarter * math.pi / 2
        T = np.eye(4)
        c, s = math.cos(yaw), math.sin(yaw)
        T[:3, 0], T[:3, 1] = (0.0, 0.0, -1.0), (c, s, 0.0)
        T[:3, 2] = np.cross(T[:3, 0], T[:3, 1])
        cl, sl = math.cos(lean), math.sin(lean)
        T[:3, :3] = T[:3, :3] @ np.array([[cl, 0.0, sl], [0.0, 1.0, 0.0], [-sl, 0.0, cl]])
        T[:3, 3] = (obj.position_m[0], obj.position_m[1], ft.top_z(obj) - 0.015)
        frames += [(None, T), (None, _flipped(T))]
    return _distinct(frames)


RIM_INSET_M = 0.0065  # a grasp across a round wall closes this far inside the body's outer radius
RIM_BELOW_TOP_M = 0.007  # ... and this far below the wall's top
RIM_GRASPS = 8  # ... at this many places around it


def _across_wall(obj: SceneObject) -> list[tuple[int | None, np.ndarray]]:
    """Top-down grasps across the round wall of a container with a handle (its floor centre off its extent's
    middle: a pan), the fingers opening along the radius, at ``RIM_GRASPS`` places around it but the handle's
    root, those nearest the handle first (where the handle's end lies beyond an arm's reach, the wall beside
    its root may not)."""
    floor = ft.point(obj, "center")
    if floor is None or not ft.is_container(obj):
        return []
    out_xy = np.array([obj.position_m[0] - floor[0], obj.position_m[1] - floor[1]])
    if float(np.linalg.norm(out_xy)) <= APPENDAGE_OFFSET_M:
        return []
    box = obj.box_m or obj.size_m
    radius = min(box[0], box[1]) / 2 - RIM_INSET_M
    towards = math.atan2(out_xy[1], out_xy[0])
    angles = sorted((towards + 2 * math.pi * k / RIM_GRASPS for k in range(1, RIM_GRASPS)),
                    key=lambda a: abs(math.remainder(a - towards, 2 * math.pi)))  # not on the handle's root
    frames: list[tuple[int | None, np.ndarray]] = []
    for a in angles:
        radial = np.array([math.cos(a), math.sin(a), 0.0])
        T = np.eye(4)
        T[:3, 0], T[:3, 1] = (0.0, 0.0, -1.0), radial
        T[:3, 2] = np.cross(T[:3, 0], T[:3, 1])
        T[:3, 3] = (floor[0] + radius * radial[0], floor[1] + radius * radial[1], ft.top_z(obj) - RIM_BELOW_TOP_M)
        frames += [(None, T), (None, _flipped(T))]
    return frames


HANDLE_SLIDES_M = (0.03, 0.06)  # a top-down handle grasp is also tried this much nearer the object's body
HANDLE_BODY_CLEAR_M = 0.01  # ... while it stays this far outside the body's radius


def _along_handles(obj: SceneObject) -> list[tuple[int | None, np.ndarray]]:
    """Each top-down grasp on a handle that sticks out of the object's body (a pan's), slid along the handle
    towards the body by ``HANDLE_SLIDES_M`` while it stays ``HANDLE_BODY_CLEAR_M`` outside the body's radius
    (half the footprint's narrower side): where the handle's end lies beyond an arm's reach, nearer its root
    may not."""
    box = obj.box_m or obj.size_m
    body_r = min(box[0], box[1]) / 2
    floor = ft.point(obj, "center") or obj.position_m
    out: list[tuple[int | None, np.ndarray]] = []
    for g in ft.grasps(obj):
        if g.part != "handle" or not g.top_down:
            continue
        T = _frame_of(obj.points[f"cp{g.cp}"])
        inward = np.array([floor[0] - g.position_m[0], floor[1] - g.position_m[1], 0.0])
        d = float(np.linalg.norm(inward))
        for slide in HANDLE_SLIDES_M:
            if d - slide < body_r + HANDLE_BODY_CLEAR_M:
                break
            T_slid = T.copy()
            T_slid[:3, 3] += slide * inward / d
            out += [(g.cp, T_slid), (g.cp, _flipped(T_slid))]
    return out


AXIS_LEVEL_MAX = 0.3  # a grasp axis this far from level (the z part of its unit vector) is not a lying handle's
ROLLED_SAME_HEIGHT_M = 0.005  # ... and after a roll about it the grasp point stays this close to its first height


def _turned_down(T: np.ndarray, T_first: np.ndarray | None) -> np.ndarray | None:
    """A grasp frame that approaches from below, turned about its own z axis (the axis along the fingers' pads: a
    handle's) until it approaches from above, where the object rolled about that axis since it was first seen
    (``T_first``, the same grasp then, from above): the axis level and the grasp point at the height it had, so
    the object lies on the table as it lay, turned about the axis only, and the part is round about it (a
    rolling pin after a slip); None otherwise."""
    axis = T[:3, 2]
    if T_first is None or T_first[2, 0] > -AXIS_LEVEL_MAX or abs(float(axis[2])) > AXIS_LEVEL_MAX:
        return None
    if abs(float(T[2, 3] - T_first[2, 3])) > ROLLED_SAME_HEIGHT_M:
        return None
    down = np.array([0.0, 0.0, -1.0]) - float(np.dot([0.0, 0.0, -1.0], axis)) * axis
    down /= float(np.linalg.norm(down))
    out = T.copy()
    out[:3, 0], out[:3, 2] = down, axis
    out[:3, 1] = np.cross(axis, down)
    return out


def _flipped(T: np.ndarray) -> np.ndarray:
    """The grasp frame turned half round its approach axis (the fingers swap sides)."""
    F = T.copy()
    F[:3, 1], F[:3, 2] = -T[:3, 1], -T[:3, 2]
    return F


def _distinct(frames: list[tuple[int | None, np.ndarray]]) -> list[tuple[int | None, np.ndarray]]:
    """The frames without repeats (the same position and axes within 1 mm / 0.01)."""
    out: list[tuple[int | None, np.ndarray]] = []
    for cp, T in frames:
        if not any(np.allclose(T[:3, :], U[:3, :], atol=1e-2) for _, U in out):
            out.append((cp, T))
    return out


def ee_for(T_grasp: np.ndarray, back_m: float = 0.0) -> np.ndarray:
    """The end-effector frame that puts the grasp centre ``back_m`` behind ``T_grasp`` along its approach."""
    T = T_grasp.copy()
    T[:3, 3] = T_grasp[:3, 3] - (TCP_M + back_m) * T_grasp[:3, 0]
    return T


def object_frame(obj: SceneObject) -> np.ndarray:
    """The object's frame in the world (bottom centre, z up), from its model's "origin" or its box."""
    origin = obj.point("origin") or obj.point("fp0")
    if origin is not None:
        return _frame_of(origin)
    T = np.eye(4)
    T[:3, :3] = Rotation.from_euler("z", ft.yaw_rad(obj)).as_matrix()
    T[:3, 3] = (obj.position_m[0], obj.position_m[1], ft.bottom_z(obj))
    return T


def pick(hands: Hands, arm: str, obj: SceneObject, T_grasp: np.ndarray, pre_m: float = PRE_GRASP_M) -> np.ndarray:
    """Approach from ``pre_m`` behind, close and lift; returns the end effector's frame in the object's frame (how
    it is held)."""
    pre, at = ee_for(T_grasp, pre_m), ee_for(T_grasp)
    hands.act(**{arm: (_pose(pre), OPEN)})
    hands.act(**{arm: (_pose(at), OPEN)})
    hands.act(**{arm: (None, CLOSED)})
    up = at.copy()
    up[2, 3] += LIFT_M
    hands.act(**{arm: (_pose(up), None)})
    return np.linalg.inv(object_frame(obj)) @ at


def held_frame(hands: Hands, arm: str, obj: SceneObject) -> np.ndarray:
    """How ``arm`` holds ``obj`` now: its end effector in the object's frame."""
    return np.linalg.inv(object_frame(obj)) @ _matrix(hands.pose[arm])


RELEASE_HIGHER_M = (0.02, 0.04)  # let go this much higher where the arm cannot reach the release pose


def place(hands: Hands, arm: str, obj: SceneObject, T_ee_obj: np.ndarray, bottom_xyz: Sequence[float],
          release: bool = True, turn_rad: float = 0.0, carry_m: float = CARRY_M) -> list[float]:
    """Carry the held object over ``bottom_xyz`` (where its bottom centre goes, its yaw kept, or turned by
    ``turn_rad`` with the wrist), lower it to ``RELEASE_M`` above, let go and rise; ``release=False`` holds it
    there. Returns where its functional point 0 is put (``ActionPlan.aim_m``; the object's frame where it has
    no such point)."""
    T_obj = object_frame(obj)
    target = T_obj.copy()
    if turn_rad:
        target[:3, :3] = Rotation.from_euler("z", turn_rad).as_matrix() @ T_obj[:3, :3]
    target[:3, 3] = bottom_xyz
    fp0 = obj.point("fp0")
    at = target @ np.linalg.inv(T_obj) @ np.array([*fp0[:3], 1.0]) if fp0 is not None else target[:, 3]
    aim = [float(at[0]), float(at[1]), float(at[2])]
    for lift in (carry_m, RELEASE_M if release else 0.0):
        T = target.copy()
        T[2, 3] += lift
        hands.act(**{arm: (_pose(T @ T_ee_obj), None)})
    if not release:
        return aim
    hands.alternatives[len(hands.actions) - 1] = _raised(hands.actions[-1], arm)
    hands.act(**{arm: (None, OPEN)})
    hands.alternatives[len(hands.actions) - 1] = _raised(hands.actions[-1], arm)
    retreat(hands, arm)
    return aim


def _raised(action: list[float], arm: str) -> list[list[float]]:
    """``action`` with ``arm``'s hand ``RELEASE_HIGHER_M`` higher, in turn: where the arm cannot lower the object
    that far (no IK close to its base), it lets go a little higher and the object drops onto its place."""
    k = 0 if arm == "left" else 8
    out = []
    for dz in RELEASE_HIGHER_M:
        alt = list(action)
        alt[k + 2] += dz
        out.append(alt)
    return out


def retreat(hands: Hands, arm: str) -> None:
    """Rise ``RETREAT_M`` off what was let go; where the arm cannot, less, else stay (the object is placed)."""
    here = list(hands.actions[-1])
    up = _matrix(hands.pose[arm])
    up[2, 3] += RETREAT_M
    hands.act(**{arm: (_pose(up), None)})
    k = 0 if arm == "left" else 8
    others = []
    for dz in (RETREAT_M / 2, 0.0):
        alt = list(here)
        alt[k + 2] = here[k + 2] + dz
        others.append(alt)
    hands.alternatives[len(hands.actions) - 1] = others


PRE_GRASPS_M = (PRE_GRASP_M, 0.05)  # approach distances tried with each grasp frame
TURNS_RAD = (0.0, math.pi / 2, -math.pi / 2, math.pi)  # wrist turns tried for a carry the arm cannot make straight
CARRIES_M = (CARRY_M, 0.05, 0.02)  # heights above the target the held object is carried at, in turn
FALLBACKS = 7  # other grasp frames and approaches (or carries) the Actor may try when a motion cannot be planned


def ee_plan(subtask: Subtask, obj: SceneObject, target: SceneObject | None, localized: dict[str, SceneObject],
            scene: SceneMemory, ctx: AgentContext, attempt: int, held_by: str | None) -> ActionPlan:
    """End-effector actions for one subtask: variant ``attempt`` first, the next ones as fallbacks. Taking the
    object, the variants are its grasp frames and approaches; holding it already, the carries (wrist turns and
    heights) to the target."""
    start = Hands.now(ctx)
    hint = subtask.arm_hint if subtask.arm_hint in ARMS else None
    arm = hint or held_by or _arm_for(obj, target, subtask, ctx)
    busy = busy_hands(ctx, held_by)
    if not hint and held_by is None and arm in busy and len(busy) == 1:
        arm = "right" if arm == "left" else "left"  # the other hand holds what is to stay held (a pan)
    n = (len(TURNS_RAD) * len(CARRIES_M) if held_by == arm
         else max(1, len(grasp_frames(obj, first_seen(obj, scene.initial)))) * len(PRE_GRASPS_M))
    relay = None
    if not hint and held_by is None and target is not None and not _one_arm_reaches(obj, target, ctx):
        # no arm reaches both: the object's arm sets it down near the robot, where the other arm takes it on the
        # next attempt (the subtask is planned again from there)
        relay = gp.free_spot(EE_RELAY_XY_M[attempt % len(EE_RELAY_XY_M)], obj, gp.others(obj.id, scene, localized))
    plans = [_ee_variant(subtask, obj, target, localized, scene, ctx, v % n, held_by, start, arm, relay)
             for v in range(attempt, attempt + min(n, FALLBACKS + 1))]
    first = plans[0]
    return first.model_copy(update={"fallbacks": [p.calls for p in plans[1:] if p.calls != first.calls]})


EE_RELAY_XY_M = ((0.0, -0.13), (0.0, -0.10), (-0.04, -0.14), (0.04, -0.14))  # both arms reach down there


def _one_arm_reaches(obj: SceneObject, target: SceneObject, ctx: AgentContext) -> bool:
    return any(ctx.reach[side].reaches(*obj.position_m[:2]) and ctx.reach[side].reaches(*target.position_m[:2])
               for side in ("left", "right"))


def _arm_for(obj: SceneObject, target: SceneObject | None, subtask: Subtask, ctx: AgentContext) -> str:
    """The arm on the object's side, unless only the other one reaches both the object and the target."""
    own = "left" if obj.position_m[0] < 0 else "right"
    if target is None or subtask.relation in (None, "center"):
        return own
    for arm in (own, "right" if own == "left" else "left"):
        side = ctx.reach["left" if arm == "left" else "right"]
        if side.reaches(*obj.position_m[:2]) and side.reaches(*target.position_m[:2]):
            return arm
    return own


def _ee_variant(subtask: Subtask, obj: SceneObject, target: SceneObject | None, localized: dict[str, SceneObject],
                scene: SceneMemory, ctx: AgentContext, variant: int, held_by: str | None, start: Hands,
                arm: str, relay_xy: tuple[float, float] | None = None) -> ActionPlan:
    hands = Hands({a: list(p) for a, p in start.pose.items()}, dict(start.grip))
    table_z = ctx.table_top_z
    if subtask.action == "lift" and subtask.arm_hint == "both":
        if held_by in ARMS and not busy_hands(ctx, held_by) and ft.bottom_z(obj) > table_z + HELD_UP_M:
            return _set_down_held(hands, obj, ctx, variant, held_by)
        first = first_seen(obj, scene.initial)
        centring = _centring(obj, ctx, first, variant)
        if centring is not None:
            return _centre_for_both(hands, obj, table_z, variant, *centring)
        return _lift_both(hands, subtask, obj, table_z, variant, first)
    turn, carry = 0.0, CARRY_M
    if held_by == arm:
        T_ee_obj = held_frame(hands, arm, obj)
        grasped = "held"
        turn, carry = TURNS_RAD[variant % len(TURNS_RAD)], CARRIES_M[(variant // len(TURNS_RAD)) % len(CARRIES_M)]
    else:
        frames = grasp_frames(obj, first_seen(obj, scene.initial))
        cp, T_grasp = frames[variant % len(frames)]
        pre = PRE_GRASPS_M[(variant // len(frames)) % len(PRE_GRASPS_M)]
        T_ee_obj = pick(hands, arm, obj, T_grasp, pre)
        grasped = f"grasp cp{cp}" if cp is not None else "a top-down grasp"
    if relay_xy is not None:
        place(hands, arm, obj, T_ee_obj, [relay_xy[0], relay_xy[1], table_z], release=True, turn_rad=0.0,
              carry_m=carry)
        return ActionPlan(calls=hands.calls(arm, obj.id), strategy=f"ee relay {arm} #{variant}", relay=True,
                          rationale=f"no arm reaches both {obj.id} and {target.id if target else 'its target'}: "
                                    f"the {arm} arm sets {obj.id} ({grasped}) down at ({relay_xy[0]:.2f}, "
                                    f"{relay_xy[1]:.2f}), within both arms' reach; the subtask is planned again "
                                    "from there")
    where = _target_bottom(subtask, obj, target, localized, scene, table_z)
    other = "right" if arm == "left" else "left"
    if (where is not None and subtask.relation == "in" and target is not None
            and holder_of(target, ctx, list(localized.values())) == other):
        where = _clear_of(where, hands.pose[other])
    if where is None:  # a pick or a lift: it stays in the hand
        if subtask.height_m is not None:
            up = _matrix(hands.pose[arm])
            up[2, 3] += max(0.0, subtask.height_m - (ft.bottom_z(obj) + LIFT_M)) + 0.03
            hands.act(**{arm: (_pose(up), None)})
        return ActionPlan(calls=hands.calls(arm, obj.id), strategy=f"ee take {arm} #{variant}",
                          rationale=f"the {arm} arm takes {obj.id} ({grasped}) and holds it up")
    aim = place(hands, arm, obj, T_ee_obj, where, release=not subtask.hold, turn_rad=turn, carry_m=carry)
    return ActionPlan(calls=hands.calls(arm, obj.id), strategy=f"ee move {arm} #{variant}", aim_m=aim,
                      rationale=f"the {arm} arm moves {obj.id} ({grasped}) with its bottom to "
                                f"({where[0]:.3f}, {where[1]:.3f}, {where[2]:.3f})"
                                + (f", turned {math.degrees(turn):.0f} deg" if turn else "")
                                + ("" if not subtask.hold else " and holds it there"))


HOLDER_CLEAR_M = 0.115  # what is put into a container the other hand holds goes this far from that hand (the
IN_SHIFT_MAX_M = 0.025  # guard keeps grippers 0.10 m apart), off the container's middle by at most this


def _clear_of(where: list[float], holder_pose: Sequence[float]) -> list[float]:
    """``where`` moved straight away from the holding hand (horizontally) until it lies ``HOLDER_CLEAR_M`` from it,
    by at most ``IN_SHIFT_MAX_M`` (a pan held across its wall: its middle lies 9.4 cm from the hand)."""
    away = np.array([where[0] - holder_pose[0], where[1] - holder_pose[1]])
    d = float(np.linalg.norm(away))
    shift = min(max(0.0, HOLDER_CLEAR_M - d), IN_SHIFT_MAX_M)
    if shift <= 0.0 or d < 1e-6:
        return where
    return [where[0] + shift * away[0] / d, where[1] + shift * away[1] / d, where[2]]


def _target_bottom(subtask: Subtask, obj: SceneObject, target: SceneObject | None,
                   localized: dict[str, SceneObject], scene: SceneMemory, table_z: float) -> list[float] | None:
    """Where the object's bottom centre goes, or None when it stays in the hand."""
    rel = subtask.relation
    if subtask.action in ("pick", "lift") or rel is None:
        return None
    if rel == "center":
        x, y, z = gp.centre_target(obj, scene, localized, table_z)
        return [x, y, z + (HOLD_UP_M if subtask.hold else 0.0)]
    if rel == "slot" and subtask.layout == "cross":
        x, y = gp.cross_slot(subtask.slot or 0)
        return [x, y, table_z]
    if target is None:
        raise AgentError(f"no localised target for {subtask.text!r}")
    if rel == "in" and ft.is_container(target):
        inside = target.point("center") or (*target.position_m[:2], ft.floor_z(target))
        return [inside[0], inside[1], ft.floor_z(target) + 0.005]
    if rel == "on":
        drop = gp.drop_point(target, obj, {**{o.id: o for o in scene.objects}, **localized}.values(),
                             scene.initial)
        if drop is not None:
            return [drop[0], drop[1], drop[2] + 0.005]
        top = target.point("top") or (target.position_m[0], target.position_m[1], ft.top_z(target))
        return [top[0], top[1], ft.top_z(target)]
    raise AgentError(f"the fine tier's actions do not place {rel!r} yet ({subtask.text!r})")


BOTH_REACH_Y_M = (-0.05, 0.0, -0.10, 0.05)  # spots along the centre line tried for a two-handed lift, in turn
HELD_UP_M = 0.03  # one hand holds what both are to lift up when its bottom is this far above the table


def _two_places(obj: SceneObject, first: SceneObject | None) -> tuple[list[tuple[int | None, np.ndarray]],
                                                                          list[tuple[int | None, np.ndarray]]]:
    """The object's grasp frames at its leftmost and at its rightmost place (the two hands' places for a lift)."""
    frames = [f for f in grasp_frames(obj, first) if f[0] is not None]
    xs = sorted({round(float(T[0, 3]), 3) for _, T in frames})
    if len(xs) < 2:
        raise AgentError(f"lifting {obj.id} with both arms needs grasp frames at two places; perception knows "
                         f"{len(xs)}")
    return ([f for f in frames if round(float(f[1][0, 3]), 3) == xs[0]],
            [f for f in frames if round(float(f[1][0, 3]), 3) == xs[-1]])


def _reached(ctx: AgentContext, arm: str, frames: Sequence[tuple[int | None, np.ndarray]],
             shift: tuple[float, float] = (0.0, 0.0)) -> bool:
    """Whether ``arm`` reaches one of ``frames`` (moved by ``shift`` in x and y) by the Station's reach estimate."""
    side = ctx.reach["left" if arm == "left" else "right"]
    return any(side.reaches(float(T[0, 3]) + shift[0], float(T[1, 3]) + shift[1],
                            height_m=max(0.0, float(T[2, 3]) - ctx.table_top_z)) for _, T in frames)


def _towards_centre(arm: str, cx: float, ox: float, hand_x: float) -> float:
    """The shift in x that brings an object at ``ox`` to the centre line ``cx``, cut short where ``arm``'s hand, at
    ``hand_x``, would cross it."""
    return max(cx - ox, cx - hand_x) if arm == "right" else min(cx - ox, cx - hand_x)


def _centring(obj: SceneObject, ctx: AgentContext, first: SceneObject | None,
              variant: int) -> tuple[str, np.ndarray, tuple[float, float]] | None:
    """Where an object to be lifted with both hands must first be moved, when the left arm does not reach its left
    place or the right arm its right one (a fault left it to a side, or at the front or back): (the arm that
    carries it, that arm's grasp frame, the (dx, dy) shift). The shift brings the object towards the centre line,
    to the spot of ``BOTH_REACH_Y_M`` (nearest first) where each arm reaches its place; the carrying hand takes a
    place on its own side and does not cross the centre line (short of it the lift is planned again from where
    the object then lies). ``variant`` picks among the grasps that do (a hand turned the other way reaches
    elsewhere). None when both places are reached already, or no spot or no such arm is found."""
    lefts, rights = _two_places(obj, first)
    if _reached(ctx, "left", lefts) and _reached(ctx, "right", rights):
        return None
    cx = ctx.reach["left"].centre_x_m
    ox, oy = obj.position_m[0], obj.position_m[1]
    ys = [y for y in sorted(BOTH_REACH_Y_M, key=lambda y: abs(y - oy))
          if _reached(ctx, "left", lefts, (cx - ox, y - oy)) and _reached(ctx, "right", rights, (cx - ox, y - oy))]
    if not ys:
        return None
    dy = gp.rotate(ys, variant)[0] - oy
    own = "left" if ox < cx else "right"
    ways = []
    for arm in (own, "right" if own == "left" else "left"):
        for _, T in sorted([*lefts, *rights], key=lambda f: abs(float(f[1][0, 3]) - cx)):
            xh = float(T[0, 3])
            if (xh - cx) * (1.0 if arm == "right" else -1.0) < 0.0:
                continue  # a place on the other arm's side
            dx = _towards_centre(arm, cx, ox, xh)
            if _reached(ctx, arm, [(None, T)]) and _reached(ctx, arm, [(None, T)], (dx, dy)):
                ways.append((arm, T, (dx, dy)))
    return ways[variant % len(ways)] if ways else None


def _centre_for_both(hands: Hands, obj: SceneObject, table_z: float, variant: int, arm: str, T_grasp: np.ndarray,
                     shift: tuple[float, float]) -> ActionPlan:
    """One arm takes the object at the place nearer the middle and sets it down ``shift`` away, where each arm
    reaches its own place; the lift is planned again from there (a relay)."""
    T_ee_obj = pick(hands, arm, obj, T_grasp)
    to = [obj.position_m[0] + shift[0], obj.position_m[1] + shift[1], table_z]
    place(hands, arm, obj, T_ee_obj, to)
    return ActionPlan(calls=hands.calls(arm, obj.id), strategy=f"ee centre {arm} #{variant}", relay=True,
                      rationale=f"the arms do not both reach their places on {obj.id}: the {arm} arm sets it down "
                                f"at ({to[0]:.2f}, {to[1]:.2f}), where each does; the lift is planned again from "
                                "there")


def _set_down_held(hands: Hands, obj: SceneObject, ctx: AgentContext, variant: int, arm: str) -> ActionPlan:
    """One hand holds up what both are to lift (its carry to the middle could not be finished, or the other hand
    let go): it sets it down on the table towards the centre line, its hand not crossing it, at the spot of
    ``BOTH_REACH_Y_M`` nearest where it is (each retry the next), and the lift is planned again from there."""
    cx = ctx.reach["left"].centre_x_m
    ox, oy = obj.position_m[0], obj.position_m[1]
    hand_x = hands.pose[arm][0]
    dx = _towards_centre(arm, cx, ox, hand_x)
    y = gp.rotate(sorted(BOTH_REACH_Y_M, key=lambda v: abs(v - oy)), variant)[0]
    to = [ox + dx, y, ctx.table_top_z]
    hands.grip[arm] = CLOSED  # it holds: carried closed whatever the opening reads
    place(hands, arm, obj, held_frame(hands, arm, obj), to)
    return ActionPlan(calls=hands.calls(arm, obj.id), strategy=f"ee set down {arm} #{variant}", relay=True,
                      rationale=f"the {arm} hand alone holds {obj.id}, which both are to lift: it sets it down at "
                                f"({to[0]:.2f}, {to[1]:.2f}); the lift is planned again from there")


def _lift_both(hands: Hands, subtask: Subtask, obj: SceneObject, table_z: float, attempt: int,
               first: SceneObject | None = None) -> ActionPlan:
    """Both arms take the object at two grasp frames (the left arm the one further left) and raise it together."""
    lefts, rights = _two_places(obj, first)
    combos = [(a, b, pre) for pre in PRE_GRASPS_M for a in lefts for b in rights]
    lf, rf, pre = combos[attempt % len(combos)]
    by_x = [lf, rf]
    left, right = lf[1], rf[1]
    hands.act(left=(_pose(ee_for(left, pre)), OPEN), right=(_pose(ee_for(right, pre)), OPEN))
    hands.act(left=(_pose(ee_for(left)), OPEN), right=(_pose(ee_for(right)), OPEN))
    hands.act(left=(None, CLOSED), right=(None, CLOSED))
    rise = max(LIFT_M, (subtask.height_m or 0.0) - ft.bottom_z(obj) + 0.03)
    up_l, up_r = ee_for(left), ee_for(right)
    up_l[2, 3] += rise
    up_r[2, 3] += rise
    hands.act(left=(_pose(up_l), None), right=(_pose(up_r), None))
    return ActionPlan(calls=hands.calls("left", obj.id), strategy=f"ee lift both #{attempt}",
                      rationale=f"both arms take {obj.id} at cp{by_x[0][0]} and cp{by_x[-1][0]} and raise it "
                                f"{rise:.2f} m together")
