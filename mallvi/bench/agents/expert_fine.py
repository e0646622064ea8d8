"""Scripted, privileged Tier 3 solutions: 16-dim end-effector actions computed from simulator truth."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mallvi.bench.agents.expert_ctx import ExpertContext, up
from mallvi.bench.tasks.task_base import point, pos
from mallvi.contracts.geometry import ArmSide, Pose

Script = Callable[[ExpertContext], None]
LIFT_M = 0.10
#: the held object is let go this far above its target (it drops the rest); higher only if the fingers would
#: otherwise have no collision-free pose (e.g. right above the block it goes onto)
RELEASE_ABOVE_M = (0.015, 0.03, 0.045)
#: a release pose the executor cannot reach with the object in hand is tried this much higher, in turn
RAISED_RELEASE_M = (0.0, 0.015, 0.03)


@dataclass(frozen=True)
class GraspSpec:
    """Which top-down grasps of an object the expert may use besides its grasp frames as they are: ``turns``
    turns about the approach axis (2: the 180° a parallel gripper allows; more for a round object), slides
    along the frame's z axis (along a handle or a loaf), and grasps across a round wall (``rim``: radius and
    height in the object's frame, metres) every 45° around it."""

    turns: int = 2
    slides_m: tuple[float, ...] = (0.0,)
    rim: tuple[float, float] | None = None


#: a round object (the burger) is grasped from above at any of this many wrist turns (every 30°)
ROUND_GRASP_TURNS = 12
#: the skillet: along its handle (from its grasp point, + outwards; the handle spans -0.077..+0.043 m), or
#: across its wall (mid-wall radius 0.0935 m, 7 mm below the wall's top) where the handle is out of reach
PAN_GRASPS = GraspSpec(slides_m=(0.0, -0.03, -0.05, 0.03), rim=(0.0935, 0.028))
#: the loaf (0.12 m long) also off its middle
LOAF_GRASPS = GraspSpec(slides_m=(0.0, 0.03, -0.03))


class Hands:
    """The commanded pose ([x, y, z, qw, qx, qy, qz]) and gripper of each arm; ``send`` issues one action."""

    def __init__(self, c: ExpertContext) -> None:
        self.c = c
        world: Any = c.world  # the expert is privileged: it reads the simulator's arms directly
        self.tcp_m = float(world.embodiment.tcp_offset_m)
        self.pose: dict[ArmSide, list[float]] = {s: world.arms[s].ee_pose().as_list() for s in ("left", "right")}
        self.grip: dict[ArmSide, float] = {s: 1.0 for s in ("left", "right")}
        self.home: dict[ArmSide, list[float]] = {s: list(p) for s, p in self.pose.items()}
        self._reach: dict[tuple[Any, ...], bool] = {}
        self._ends: dict[tuple[Any, ...], NDArray[np.float64] | None] = {}

    def send(self) -> bool:
        self._reach.clear()
        self._ends.clear()
        a = [*self.pose["left"], self.grip["left"], *self.pose["right"], self.grip["right"]]
        return self.c.ee(a).ok

    def ee_for_grasp(self, obj: str, cp: str, back_m: float) -> list[float]:
        """EE pose that puts the grasp centre ``back_m`` behind the object's grasp frame ``cp``."""
        T = np.asarray(self.c.world.objects[obj].point_world(cp).to_transformation_matrix())
        p = T[:3, 3] - (self.tcp_m + back_m) * T[:3, 0]
        return Pose.from_matrix(_with_p(T, p)).as_list()

    def reachable(self, arm: ArmSide, pose: list[float]) -> bool:
        """Whether ``arm`` has an IK solution for the EE pose ``[x, y, z, qw, qx, qy, qz]``, checked against the
        world as it is now (the other arm where it stands, what this arm holds), as the executor will plan it."""
        key = (arm, *np.round(pose, 4).tolist())
        if key not in self._reach:  # answers hold until the next action moves something
            world: Any = self.c.world
            world.skills.motion.sync_planner(arm, with_objects=False)
            pose_w = Pose.from_arrays(pose[:3], pose[3:])
            self._reach[key] = world.planners[arm].has_ik(pose_w, world.arms[arm].joint_positions_rad())
        return self._reach[key]

    def move_end(
        self, arm: ArmSide, pose: list[float], q_start: NDArray[np.float64], held: str | None
    ) -> NDArray[np.float64] | None:
        """The joint positions in which the executor's move of ``arm`` from ``q_start`` to ``pose`` would end, or
        None if it would fail: planned as the executor plans it (a straight move; if that fails, IK among the
        scene's objects, ``held`` not among them), in the world as it is now."""
        key = (arm, held, *np.round(pose, 4).tolist(), *np.round(q_start, 3).tolist())
        if key not in self._ends:  # answers hold until the next action moves something
            world: Any = self.c.world
            motion, planner = world.skills.motion, world.planners[arm]
            target = Pose.from_arrays(pose[:3], pose[3:])
            motion.sync_planner(arm, with_objects=False)
            straight = planner.plan_straight(target, q_start)
            if straight.ok:
                self._ends[key] = np.asarray(straight.path_rad[-1], dtype=float)
            else:
                motion.sync_planner(arm, with_objects=True, exclude=frozenset({held} if held else set()))
                self._ends[key], _ = planner.ik(target, q_start)
        return self._ends[key]

    def chain_ok(self, arm: ArmSide, poses: list[list[float]], q_start: NDArray[np.float64], held: str | None
                 ) -> NDArray[np.float64] | None:  # fmt: skip
        """The joint positions after the executor's moves through ``poses`` in turn, or None if one would fail."""
        q: NDArray[np.float64] | None = q_start
        for pose in poses:
            q = self.move_end(arm, pose, q, held) if q is not None else None
        return q

    def grasp_frames(self, obj: str, spec: GraspSpec = GraspSpec()) -> list[NDArray[np.float64]]:
        """The object's grasp frames (4×4 in the world, x = approach, y = finger opening) widened by ``spec``."""
        o = self.c.world.objects[obj]
        T_obj = np.asarray(o.frame_pose().to_transformation_matrix())
        bases = []
        for k, d in itertools.product(sorted(k for k in o.local_points if k.startswith("cp")), spec.slides_m):
            T = np.asarray(o.point_world(k).to_transformation_matrix())
            T[:3, 3] += d * T[:3, 2]
            bases.append(T)
        if spec.rim is not None:
            radius_m, z_m = spec.rim
            for phi in np.arange(8) * np.pi / 4:
                radial = np.array([np.cos(phi), np.sin(phi), 0.0])
                T = np.eye(4)
                down = np.array([0.0, 0.0, -1.0])
                T[:3, :3] = T_obj[:3, :3] @ np.column_stack([down, radial, np.cross(down, radial)])
                T[:3, 3] = T_obj[:3, :3] @ (radius_m * radial + [0.0, 0.0, z_m]) + T_obj[:3, 3]
                bases.append(T)
        out = []
        for T in bases:
            for i in range(spec.turns):
                a = 2.0 * np.pi * i / spec.turns
                Rx = np.eye(4)
                Rx[1:3, 1:3] = [[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]
                out.append(T @ Rx)
        return out

    def plan_pick(
        self,
        arm: ArmSide,
        obj: str,
        target_fp0: NDArray[np.float64] | None,
        spec: GraspSpec = GraspSpec(),
    ) -> list[list[float]] | None:
        """EE poses [pre-grasp, grasp, lifted, above target, at target] for the first top-down grasp frame whose
        every pose the executor can reach in turn (the target poses only when ``target_fp0`` is given). While
        carrying, the wrist may turn by a multiple of 90° about the vertical when that is what makes the target
        reachable; the object turns with it about the grasp, and the carry puts its bottom centre on the target."""
        fp0 = point(self.c.world, obj, "fp0")
        for T in self.grasp_frames(obj, spec):
            if T[2, 0] > -0.5:  # only grasps from above
                continue
            poses = []
            for back in (0.10, 0.0):
                Tb = T.copy()
                Tb[:3, 3] = T[:3, 3] - (self.tcp_m + back) * T[:3, 0]
                poses.append(Pose.from_matrix(Tb).as_list())
            grasp = np.asarray(poses[1][:3])
            poses.append([*up(grasp, LIFT_M), *poses[1][3:]])
            if not all(self.reachable(arm, p) for p in poses):
                continue
            world: Any = self.c.world
            q_lift = self.chain_ok(arm, poses, world.arms[arm].joint_positions_rad(), None)
            if q_lift is None:  # reachable, but the executor would not get there (e.g. no straight descent)
                continue
            if target_fp0 is None:
                return poses
            R_grasp = Pose.from_arrays(poses[1][:3], poses[1][3:]).as_matrix()[:3, :3]
            for release_m, turn_rad in itertools.product(RELEASE_ABOVE_M, (0.0, np.pi / 2, -np.pi / 2, np.pi)):
                c, s = np.cos(turn_rad), np.sin(turn_rad)
                Rz = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
                # the grasp's offset from the bottom centre turns with the wrist (a handle swings round the pan)
                at = np.asarray(up(np.asarray(target_fp0) + Rz @ (grasp - fp0), release_m))
                T_at = np.eye(4)
                T_at[:3, :3] = Rz @ R_grasp
                q = Pose.from_matrix(T_at).quat_wxyz
                carry = [[*up(at, LIFT_M), *q], [*at.tolist(), *q]]
                if all(self.reachable(arm, p) for p in carry) and self.chain_ok(arm, carry, q_lift, obj) is not None:
                    return poses + carry
        return None

    def move(self, arm: ArmSide, pose: list[float]) -> bool:
        """Send ``arm`` to ``pose``; where that action fails, the arm's command stays the pose it holds (a failed
        command kept would fail every later action of the other arm too)."""
        before = self.pose[arm]
        self.pose[arm] = pose
        if self.send():
            return True
        self.pose[arm] = before
        return False

    def shift(self, arm: ArmSide, d: NDArray[np.float64] | list[float]) -> None:
        self.pose[arm] = [*(np.asarray(self.pose[arm][:3]) + np.asarray(d)).tolist(), *self.pose[arm][3:]]


def _with_p(T: NDArray[np.float64], p: NDArray[np.float64]) -> NDArray[np.float64]:
    out = T.copy()
    out[:3, 3] = p
    return out


def _pick_place(
    h: Hands,
    arm: ArmSide,
    obj: str,
    target_fp0: NDArray[np.float64] | None,
    release: bool = True,
    spec: GraspSpec = GraspSpec(),
) -> bool:
    """Grasp ``obj`` from above and (with a target) set its bottom centre down there; False if any step failed."""
    poses = h.plan_pick(arm, obj, target_fp0, spec)
    if poses is None:
        h.c.trace.emit("error", where="expert", message=f"no reachable top-down grasp of {obj} for the {arm} arm")
        return False
    h.grip[arm] = 1.0
    for i, pose in enumerate(poses):
        if i == 2:  # close before lifting
            h.grip[arm] = 0.0
            if not h.send():
                return False
        # the release pose was checked without the held object: where its box (the planner's, which dips a few
        # millimetres where the object hangs askew in the fingers) leaves no pose there, a little higher
        if not any(h.move(arm, up(pose[:3], dz) + pose[3:]) for dz in (RAISED_RELEASE_M if i == 4 else (0.0,))):
            return False
    if target_fp0 is None or not release:
        return True
    h.grip[arm] = 1.0
    if not h.send():
        return False
    h.pose[arm] = poses[3]
    if not h.send():
        return False
    h.pose[arm] = h.home[arm]  # out of the other arm's way
    return h.send()


def _near(c: ExpertContext, obj: str) -> ArmSide:
    return "left" if pos(c.world, obj)[0] < 0 else "right"


def _stack_plan(h: Hands, upper: str, lower: str) -> tuple[ArmSide, list[list[float]]] | None:
    """An arm and its EE poses that put ``upper`` on ``lower`` where it stands, if some arm reaches both."""
    target = np.asarray(up(pos(h.c.world, lower), h.c.world.objects[lower].size_m[2]))
    near = _near(h.c, upper)
    for arm in (near, "right" if near == "left" else "left"):
        poses = h.plan_pick(arm, upper, target)
        if poses is not None:
            return arm, poses
    return None


def stack_blocks_two(c: ExpertContext) -> None:
    """Stack one block straight onto the other where it stands when an arm reaches both (either order);
    otherwise move one block to the middle first and stack the other on it."""
    h = Hands(c)
    z0 = c.world.table_top_z
    pairs = [("red_block", "green_block"), ("green_block", "red_block")]
    for upper, lower in pairs:
        plan = _stack_plan(h, upper, lower)
        if plan is not None:
            _pick_place(h, plan[0], upper, np.asarray(up(pos(c.world, lower), c.world.objects[lower].size_m[2])))
            return
    first, second = sorted(("red_block", "green_block"), key=lambda n: abs(float(pos(c.world, n)[0])))
    _pick_place(h, _near(c, first), first, np.array([0.0, -0.13, z0]))
    plan = _stack_plan(h, second, first)
    _pick_place(h, plan[0] if plan else _near(c, second), second, np.asarray(up(pos(c.world, first), 0.05)))


def grab_roller(c: ExpertContext) -> None:
    h = Hands(c)
    frames: dict[ArmSide, list[list[float]]] = {}
    for arm, cp in (("left", "cp0"), ("right", "cp1")):
        side: ArmSide = "left" if arm == "left" else "right"
        for T in h.grasp_frames("roller"):
            if np.linalg.norm(T[:3, 3] - h.c.world.objects["roller"].point_world(cp).p) > 1e-6:
                continue
            poses = []
            for back in (0.10, 0.0):
                Tb = T.copy()
                Tb[:3, 3] = T[:3, 3] - (h.tcp_m + back) * T[:3, 0]
                poses.append(Pose.from_matrix(Tb).as_list())
            if all(h.reachable(side, p) for p in poses):
                frames[side] = poses
                break
    if len(frames) < 2:
        c.trace.emit("error", where="expert", message=f"roller grasps reachable only for {sorted(frames)}")
        return
    for i in (0, 1):
        h.pose["left"], h.pose["right"] = frames["left"][i], frames["right"][i]
        h.send()
    h.grip["left"] = h.grip["right"] = 0.0
    h.send()
    h.shift("left", [0.0, 0.0, LIFT_M])
    h.shift("right", [0.0, 0.0, LIFT_M])
    h.send()


def place_object_scale(c: ExpertContext) -> None:
    h = Hands(c)
    _pick_place(h, _near(c, "object"), "object", np.asarray(up(point(c.world, "scale", "top"), 0.002)))


def place_burger_fries_ee(c: ExpertContext) -> None:
    """Burger with the left arm, fries with the right; an object whose top-down grasp the usual arm cannot turn
    its wrist to (the fries box is only graspable across its thin side) is taken by the other arm."""
    h = Hands(c)
    h.send()  # hold still once: a burger or fries box placed overlapping the tray's rim is pushed out first
    for obj, arm, drop in (("burger", "left", "drop_left"), ("fries", "right", "drop_right")):
        target = np.asarray(up(point(c.world, "tray", drop), 0.005))
        side: ArmSide = "left" if arm == "left" else "right"
        spec = GraspSpec(turns=ROUND_GRASP_TURNS) if obj == "burger" else GraspSpec()
        if h.plan_pick(side, obj, target, spec) is None:
            side = "right" if side == "left" else "left"
        _pick_place(h, side, obj, target, spec=spec)


def place_bread_skillet_ee(c: ExpertContext) -> None:
    """Bring the skillet by its handle to the middle, drop the bread into it on the table, then lift the skillet
    (holding the pan up first leaves the bread arm no reachable grasp in many layouts); if the bread cannot go
    in on the table, lift the pan first and drop the bread into it. The handle may be taken anywhere along its
    length and the loaf off its middle, whichever the arm reaches."""
    h = Hands(c)
    pan_arm = _near(c, "skillet")
    bread_arm: ArmSide = "right" if pan_arm == "left" else "left"
    pan_target = np.asarray(c.task.hints(c.world)["skillet_target"], dtype=float)
    _pick_place(h, pan_arm, "skillet", pan_target, spec=PAN_GRASPS)
    into_pan = np.asarray(up(point(c.world, "skillet", "center"), 0.03))
    if h.plan_pick(bread_arm, "bread", into_pan, spec=LOAF_GRASPS) is not None:
        if _pick_place(h, bread_arm, "bread", into_pan, spec=LOAF_GRASPS):
            _pick_place(h, pan_arm, "skillet", None, spec=PAN_GRASPS)
        return
    if not _pick_place(h, pan_arm, "skillet", None, spec=PAN_GRASPS):
        return
    into_lifted_pan = np.asarray(up(point(c.world, "skillet", "center"), 0.03))
    _pick_place(h, bread_arm, "bread", into_lifted_pan, spec=LOAF_GRASPS)


FINE_SCRIPTS: dict[str, Script] = {
    "place_object_scale": place_object_scale,
    "place_burger_fries_ee": place_burger_fries_ee,
    "place_bread_skillet_ee": place_bread_skillet_ee,
    "grab_roller": grab_roller,
    "stack_blocks_two": stack_blocks_two,
}
