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
from mallvi.graph.ports import AgentContext
from mallvi.graph.schemas import ActionPlan, SceneMemory, SceneObject, SkillCall, Subtask

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
        return [SkillCall(skill="execute_ee_action", arm=arm, object=obj, target_pose=a)  # type: ignore[arg-type]
                for a in self.actions]


def grasp_frames(obj: SceneObject) -> list[tuple[int | None, np.ndarray]]:
    """The object's grasp frames (4x4, world) top-down ones first; without any, a top-down grasp 1.5 cm below
    its top along its yaw."""
    frames: list[tuple[int | None, np.ndarray]] = []
    for g in sorted(ft.grasps(obj), key=lambda g: (not g.top_down, g.cp)):
        frames.append((g.cp, _frame_of(obj.points[f"cp{g.cp}"])))
    if frames:
        return frames
    yaw = ft.yaw_rad(obj)
    T = np.eye(4)
    c, s = math.cos(yaw), math.sin(yaw)
    T[:3, 0], T[:3, 1] = (0.0, 0.0, -1.0), (c, s, 0.0)
    T[:3, 2] = np.cross(T[:3, 0], T[:3, 1])
    T[:3, 3] = (obj.position_m[0], obj.position_m[1], ft.top_z(obj) - 0.015)
    return [(None, T)]


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


def place(hands: Hands, arm: str, obj: SceneObject, T_ee_obj: np.ndarray, bottom_xyz: Sequence[float],
          release: bool = True) -> None:
    """Carry the held object over ``bottom_xyz`` (where its bottom centre goes, its yaw kept), lower it to
    ``RELEASE_M`` above, let go and rise; ``release=False`` holds it there."""
    T_obj = object_frame(obj)
    target = T_obj.copy()
    target[:3, 3] = bottom_xyz
    for lift in (CARRY_M, RELEASE_M if release else 0.0):
        T = target.copy()
        T[2, 3] += lift
        hands.act(**{arm: (_pose(T @ T_ee_obj), None)})
    if not release:
        return
    hands.act(**{arm: (None, OPEN)})
    up = _matrix(hands.pose[arm])
    up[2, 3] += RETREAT_M
    hands.act(**{arm: (_pose(up), None)})


PRE_GRASPS_M = (PRE_GRASP_M, 0.05)  # approach distances tried with each grasp frame
FALLBACKS = 7  # other grasp frames and approaches the Actor may try when a motion cannot be planned


def ee_plan(subtask: Subtask, obj: SceneObject, target: SceneObject | None, localized: dict[str, SceneObject],
            scene: SceneMemory, ctx: AgentContext, attempt: int, held_by: str | None) -> ActionPlan:
    """End-effector actions for one subtask: the grasp frame and approach of variant ``attempt`` first, the next
    ones as fallbacks."""
    start = Hands.now(ctx)
    n = max(1, len(grasp_frames(obj))) * len(PRE_GRASPS_M)
    plans = [_ee_variant(subtask, obj, target, localized, scene, ctx, v % n, held_by, start)
             for v in range(attempt, attempt + min(n, FALLBACKS + 1))]
    first = plans[0]
    return first.model_copy(update={"fallbacks": [p.calls for p in plans[1:] if p.calls != first.calls]})


def _ee_variant(subtask: Subtask, obj: SceneObject, target: SceneObject | None, localized: dict[str, SceneObject],
                scene: SceneMemory, ctx: AgentContext, variant: int, held_by: str | None,
                start: Hands) -> ActionPlan:
    hands = Hands({a: list(p) for a, p in start.pose.items()}, dict(start.grip))
    table_z = ctx.table_top_z
    hint = subtask.arm_hint if subtask.arm_hint in ARMS else None
    if subtask.action == "lift" and subtask.arm_hint == "both":
        return _lift_both(hands, subtask, obj, table_z, variant)
    arm = hint or held_by or ("left" if obj.position_m[0] < 0 else "right")
    frames = grasp_frames(obj)
    cp, T_grasp = frames[variant % len(frames)]
    pre = PRE_GRASPS_M[(variant // len(frames)) % len(PRE_GRASPS_M)]
    if held_by == arm:
        T_ee_obj = held_frame(hands, arm, obj)
        grasped = "held"
    else:
        T_ee_obj = pick(hands, arm, obj, T_grasp, pre)
        grasped = f"grasp cp{cp}" if cp is not None else "a top-down grasp"
    where = _target_bottom(subtask, obj, target, localized, scene, table_z)
    if where is None:  # a pick or a lift: it stays in the hand
        if subtask.height_m is not None:
            up = _matrix(hands.pose[arm])
            up[2, 3] += max(0.0, subtask.height_m - (ft.bottom_z(obj) + LIFT_M)) + 0.03
            hands.act(**{arm: (_pose(up), None)})
        return ActionPlan(calls=hands.calls(arm, obj.id), strategy=f"ee take {arm} #{variant}",
                          rationale=f"the {arm} arm takes {obj.id} ({grasped}) and holds it up")
    place(hands, arm, obj, T_ee_obj, where, release=not subtask.hold)
    return ActionPlan(calls=hands.calls(arm, obj.id), strategy=f"ee move {arm} #{variant}",
                      rationale=f"the {arm} arm moves {obj.id} ({grasped}) with its bottom to "
                                f"({where[0]:.3f}, {where[1]:.3f}, {where[2]:.3f})"
                                + ("" if not subtask.hold else " and holds it there"))


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
        drop = gp.drop_point(target, obj)
        if drop is not None:
            return [drop[0], drop[1], drop[2] + 0.005]
        top = target.point("top") or (target.position_m[0], target.position_m[1], ft.top_z(target))
        return [top[0], top[1], ft.top_z(target)]
    raise AgentError(f"the fine tier's actions do not place {rel!r} yet ({subtask.text!r})")


def _lift_both(hands: Hands, subtask: Subtask, obj: SceneObject, table_z: float, attempt: int) -> ActionPlan:
    """Both arms take the object at two grasp frames (the left arm the one further left) and raise it together."""
    frames = [f for f in grasp_frames(obj) if f[0] is not None]
    if len(frames) < 2:
        raise AgentError(f"lifting {obj.id} with both arms needs two grasp frames; perception knows "
                         f"{len(frames)}")
    by_x = sorted(frames, key=lambda f: float(f[1][0, 3]))
    left, right = by_x[0][1], by_x[-1][1]
    hands.act(left=(_pose(ee_for(left, PRE_GRASP_M)), OPEN), right=(_pose(ee_for(right, PRE_GRASP_M)), OPEN))
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
