"""RigSkills: the SkillAPI primitives on a real DualArm, with object positions from a WorldModel (perception).

Grasps are top-down at the object's perceived position: open, move above the object, straight down, close,
check that something is between the fingers, lift. Every motion is an end-effector path (straight line,
slerped orientation) that the SafetyGuard checks in full before the first command is sent: workspace, table,
step and speed limits, clearance from the other arm, and, when a point-cloud source is given, the depth cloud.
With ``dry_run`` nothing is sent; the planned commands are returned in ``SkillResult.data["commands"]``.
A driver fault or Ctrl-C stops both arms (``DualArm.stop_all``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.contracts.devices import DualArm
from mallvi.contracts.errors import DriverError, UnknownObjectError
from mallvi.contracts.geometry import ArmSide, Pose, parse_arm
from mallvi.contracts.skills import FailureKind, SkillResult, parse_pose_list
from mallvi.contracts.world_model import ObjectInfo, WorldModel
from mallvi.robot_drivers.cloud_collision import obstacle_points
from mallvi.robot_drivers.rig_geometry import (
    pose_from,
    reachable_yaw,
    straight_path,
    top_down_rotation,
)
from mallvi.robot_drivers.rig_upright import stand_up_on_rig
from mallvi.robot_drivers.safety import SafetyGuard

log = logging.getLogger(__name__)

Command = dict[str, Any]


@runtime_checkable
class CartesianArm(Protocol):
    """An arm that can stream end-effector targets (the Piper's firmware does the inverse kinematics)."""

    def follow_ee_path(self, poses_world: Sequence[Pose], dt_s: float) -> None: ...


@dataclass(frozen=True)
class RigSkillsConfig:
    """Motion settings of the real-rig skills.

    Attributes:
        dry_run: plan and check every command but send none.
        step_m: spacing of end-effector waypoints.
        ee_speed_m_s: commanded end-effector speed (must not exceed the guard's max_ee_speed_m_s).
        grasp_below_top_m: the grasp centre goes this far below the object's top (at most to its centre).
        min_grasp_opening: after closing, an opening below this means the fingers closed on nothing.
        lift_m: lift after a grasp and retreat after a place.
        palm_to_tcp_m: from the gripper's palm (where the fingers start) to the grasp centre; measure it on your
            gripper (``upright_actor`` keeps a swinging object's end clear of the palm with it).
        swing_dwell_s: how long ``upright_actor`` keeps the grip loose while the object swings upright.
    """

    dry_run: bool = False
    step_m: float = 0.01
    ee_speed_m_s: float = 0.08
    grasp_below_top_m: float = 0.025
    min_grasp_opening: float = 0.05
    lift_m: float = 0.08
    palm_to_tcp_m: float = 0.06
    swing_dwell_s: float = 1.5

    def __post_init__(self) -> None:
        for name in ("step_m", "ee_speed_m_s", "grasp_below_top_m", "min_grasp_opening", "lift_m", "palm_to_tcp_m",
                     "swing_dwell_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number, got {value!r}")


@dataclass
class _Held:
    name: str
    grasp_height_m: float  # grasp centre above the object's bottom


@dataclass
class RigSkills:
    """The SkillAPI on a real dual-arm rig (see module docstring).

    Args:
        dual_arm: the two arms (e.g. two PiperArm); arms must implement ``follow_ee_path``.
        world_model: resolves object names to perceived positions and sizes.
        guard: the safety guard in front of every motion.
        planner: optional joint-space planner hook ``(side, ee_path, q_start, dt_s) -> joint path | reason``
            (e.g. ``MplibRigPlanner``); when given, moves are sent as joint paths (``follow_joint_path``) after
            the guard's joint-path check.
        cloud_world: optional callable returning the current obstacle point cloud (N×3, world frame).
    """

    dual_arm: DualArm
    world_model: WorldModel
    guard: SafetyGuard
    planner: Callable[[ArmSide, list[Pose], NDArray[np.float64], float], NDArray[np.float64] | str] | None = None
    config: RigSkillsConfig = field(default_factory=RigSkillsConfig)
    cloud_world: Callable[[], NDArray[np.float64]] | None = None
    _held: dict[str, _Held] = field(default_factory=dict, init=False, repr=False)
    _virtual: dict[str, Pose] = field(default_factory=dict, init=False, repr=False)
    _virtual_gripper: dict[str, float] = field(default_factory=dict, init=False, repr=False)

    # ---- motion core -----------------------------------------------------------------------------------------
    def _current(self, side: ArmSide) -> Pose:
        return self._virtual.get(side) or self.dual_arm.arm(side).ee_pose()

    def _other_pose(self, side: ArmSide) -> Pose:
        return self._current("right" if side == "left" else "left")

    def _path(self, start: Pose, goal: Pose) -> list[Pose]:
        return straight_path(start, goal, self.config.step_m)

    def _dt_s(self, path: list[Pose], start: Pose) -> float:
        longest = max(float(np.linalg.norm(b.p - a.p)) for a, b in zip([start, *path[:-1]], path, strict=True))
        return max(longest / self.config.ee_speed_m_s, 0.01)

    def _move(self, side: ArmSide, goal: Pose, log_: list[Command], label: str,
              ignore: Sequence[tuple[NDArray[np.float64], NDArray[np.float64]]] = ()) -> str | None:
        """Check the whole straight path to ``goal`` and execute it (unless dry-run); returns a refusal reason."""
        start = self._current(side)
        path = self._path(start, goal)
        dt_s = self._dt_s(path, start)
        why = self.guard.check_ee_path(side, path, dt_s, current=start)
        if why is None:
            other = self._other_pose(side)
            why = next((w for p in path if (w := self.guard.check_clearance(side, p, other)) is not None), None)
        cloud = self.cloud_world() if self.cloud_world is not None and why is None else None
        if cloud is not None:
            why = self.guard.check_path_against_cloud(side, path, cloud, ignore_boxes=ignore)
        joint_path = None
        if why is None and self.planner is not None:
            set_cloud = getattr(self.planner, "set_point_cloud", None)
            if cloud is not None and callable(set_cloud):  # the planner sees the same obstacles as the guard
                cfg = self.guard.config
                floor = None if cfg.table_top_z_m is None else cfg.table_top_z_m + cfg.table_margin_m
                set_cloud(obstacle_points(cloud, ignore, floor))
            planned = self.planner(side, path, self.dual_arm.arm(side).joint_positions_rad(), dt_s)
            if isinstance(planned, str):
                why = f"planning failed: {planned}"
            else:
                joint_path = planned
                why = self.guard.check_joint_path(side, joint_path, dt_s)
        if why is not None:
            return f"{label}: {why}"
        log_.append({"arm": side, "kind": label, "goal": goal.as_list(), "waypoints": len(path), "dt_s": dt_s})
        if self.config.dry_run:
            self._virtual[side] = goal
            return None
        arm = self.dual_arm.arm(side)
        if joint_path is not None:
            arm.follow_joint_path(joint_path, dt_s)
        elif isinstance(arm, CartesianArm):
            arm.follow_ee_path(path, dt_s)
        else:
            return f"{label}: the {side} arm driver cannot follow end-effector paths and no planner is configured"
        return None

    def _gripper(self, side: ArmSide, opening: float, log_: list[Command], label: str) -> str | None:
        why = self.guard.check_gripper(side, opening)
        if why is not None:
            return f"{label}: {why}"
        log_.append({"arm": side, "kind": label, "opening": opening})
        if self.config.dry_run:
            self._virtual_gripper[side] = opening
        else:
            self.dual_arm.arm(side).set_gripper(opening)
        return None

    def _opening(self, side: ArmSide) -> float:
        if self.config.dry_run:
            return self._virtual_gripper.get(side, self.dual_arm.arm(side).gripper_opening())
        return self.dual_arm.arm(side).gripper_opening()

    def _run(self, body: Callable[[list[Command]], SkillResult]) -> SkillResult:
        """Run a skill; a driver fault or Ctrl-C stops both arms. Adds the command log to the result."""
        commands: list[Command] = []
        try:
            result = body(commands)
        except DriverError as e:
            self._stop_all()
            return SkillResult.failure(f"driver fault, both arms stopped: {e}", commands=commands)
        except KeyboardInterrupt:
            self._stop_all()
            raise
        return SkillResult(result.ok, result.message, {**result.data, "commands": commands,
                                                       "dry_run": self.config.dry_run})

    def _stop_all(self) -> None:
        if self.config.dry_run:
            return
        try:
            self.dual_arm.stop_all()
        except DriverError as e:
            log.error("stopping the arms failed: %s", e)

    def _side(self, arm_tag: str) -> ArmSide | SkillResult:
        try:
            return parse_arm(str(arm_tag))
        except ValueError as e:
            return SkillResult.failure(str(e))

    def _mark_held(self, side: ArmSide, name: str, grasp_height_m: float) -> None:
        """``side`` now holds ``name`` with the grasp centre ``grasp_height_m`` above the object's bottom."""
        self._held[side] = _Held(name, grasp_height_m)

    def _side_and_object(self, arm_tag: str, name: str) -> tuple[ArmSide, ObjectInfo] | SkillResult:
        side = self._side(arm_tag)
        if isinstance(side, SkillResult):
            return side
        info = self._object(name)
        return info if isinstance(info, SkillResult) else (side, info)

    def _object(self, name: str) -> ObjectInfo | SkillResult:
        try:
            return self.world_model.get_object(name)
        except UnknownObjectError as e:
            return SkillResult.failure(str(e))

    # ---- SkillAPI ----------------------------------------------------------------------------------------------
    def grasp_actor(self, actor: str, arm_tag: ArmSide, pre_grasp_dis: float = 0.1, grasp_dis: float = 0.0,
                    gripper_pos: float = 0.0, contact_point_id: int | None = None) -> SkillResult:
        """Top-down grasp at the perceived object position (``contact_point_id`` is not used on the rig)."""
        resolved = self._side_and_object(arm_tag, actor)
        if isinstance(resolved, SkillResult):
            return resolved
        side, info = resolved
        bad = self.guard.check_values("grasp parameters", [pre_grasp_dis, grasp_dis, gripper_pos])
        if bad is not None:
            return SkillResult.failure(bad)
        if side in self._held:
            return SkillResult.failure(f"the {side} arm already holds {self._held[side].name}; place it first")
        centre = info.pose.p
        half = np.asarray(info.size_m, dtype=float) / 2.0
        grasp_z = max(centre[2], centre[2] + half[2] - self.config.grasp_below_top_m)
        yaw = float(Rotation.from_quat([*info.pose.q[1:], info.pose.q[0]]).as_euler("zyx")[0])
        if half[1] < half[0]:  # close the fingers across the narrower side
            yaw += math.pi / 2
        R = top_down_rotation(self._reachable_yaw(side, centre, yaw))
        tcp = self.guard.config.tcp_offset_m
        grasp_centre = np.array([centre[0], centre[1], grasp_z])
        ee_grasp = pose_from(grasp_centre + np.array([0, 0, tcp + grasp_dis]), R)
        ee_pre = pose_from(grasp_centre + np.array([0, 0, tcp + pre_grasp_dis]), R)
        ee_lift = pose_from(ee_grasp.p + np.array([0, 0, self.config.lift_m]), R)
        target_box = [(centre, half + 0.01)]

        def body(log_: list[Command]) -> SkillResult:
            steps: list[Callable[[], str | None]] = [
                lambda: self._gripper(side, 1.0, log_, "open"),
                lambda: self._move(side, ee_pre, log_, "pre-grasp", ignore=target_box),
                lambda: self._move(side, ee_grasp, log_, "approach", ignore=target_box),
                lambda: self._gripper(side, gripper_pos, log_, "close"),
            ]
            for step in steps:  # one after the other; stop at the first refusal
                why = step()
                if why is not None:
                    return SkillResult.failure(why)
            opening = self._opening(side)
            if not self.config.dry_run and opening < max(self.config.min_grasp_opening, gripper_pos + 0.02):
                self._gripper(side, 1.0, log_, "release")
                self._move(side, ee_pre, log_, "retreat", ignore=target_box)
                return SkillResult.failure(f"grasp of {actor} failed: the {side} gripper closed on nothing "
                                           f"(opening {opening:.2f})")
            self._mark_held(side, actor, float(grasp_z - (centre[2] - half[2])))
            why = self._move(side, ee_lift, log_, "lift", ignore=target_box)
            if why is not None:
                return SkillResult.failure(f"grasped {actor} but could not lift it: {why}")
            return SkillResult.success(object=actor, arm=side)

        return self._run(body)

    def upright_actor(self, actor: str, arm_tag: ArmSide, pre_grasp_dis: float = 0.1) -> SkillResult:
        """Stand up an object lying on its side by a gravity pivot in a loosened grip (see ``rig_upright.py``);
        the arm ends holding it upright, ready for ``place_actor``."""
        resolved = self._side_and_object(arm_tag, actor)
        if isinstance(resolved, SkillResult):
            return resolved
        side, info = resolved
        bad = self.guard.check_values("grasp parameters", [pre_grasp_dis])
        if bad is not None:
            return SkillResult.failure(bad)
        if side in self._held:
            return SkillResult.failure(f"the {side} arm already holds {self._held[side].name}; place it first")
        return stand_up_on_rig(self, side, actor, info, pre_grasp_dis)

    def place_actor(self, actor: str, arm_tag: ArmSide, target_pose: Sequence[float],
                    functional_point_id: int | None = None, pre_dis: float = 0.1, dis: float = 0.02,
                    is_open: bool = True, constrain: Literal["free", "align", "auto"] = "auto") -> SkillResult:
        """Lower the held object so its bottom is ``dis`` above ``target_pose``'s position, then release."""
        side = self._side(arm_tag)
        if isinstance(side, SkillResult):
            return side
        held = self._held.get(side)
        if held is None or held.name != actor:
            return SkillResult.failure(f"the {side} arm does not hold {actor}")
        vals = [float(v) for v in target_pose] if isinstance(target_pose, Sequence) else []
        bad = self.guard.check_values("target pose", vals) if len(vals) in (3, 7) else "target pose needs 3 or 7 values"
        bad = bad or self.guard.check_values("place distances", [pre_dis, dis])
        if bad is not None:
            return SkillResult.failure(bad)
        R = self._current(side).as_matrix()[:3, :3]
        tcp = self.guard.config.tcp_offset_m
        place_centre = np.array(vals[:3]) + np.array([0, 0, held.grasp_height_m + dis])
        ee_place = pose_from(place_centre + np.array([0, 0, tcp]), R)
        ee_pre = pose_from(ee_place.p + np.array([0, 0, pre_dis]), R)
        bad = self.guard.check_pose(side, ee_pre) or self.guard.check_pose(side, ee_place)
        if bad is not None:  # both targets are checked before the first move
            return SkillResult.failure(f"place refused before moving: {bad}", FailureKind.REFUSED_BY_GUARD)

        def body(log_: list[Command]) -> SkillResult:
            why = self._move(side, ee_pre, log_, "pre-place") or self._move(side, ee_place, log_, "lower")
            if why is not None:
                return SkillResult.failure(why)
            if is_open:
                why = self._gripper(side, 1.0, log_, "release")
                if why is not None:
                    return SkillResult.failure(why)
                del self._held[side]
                why = self._move(side, ee_pre, log_, "retreat")
                if why is not None:
                    return SkillResult.failure(f"placed {actor} but could not retreat: {why}")
            return SkillResult.success(object=actor, arm=side)

        return self._run(body)

    def move_by_displacement(self, arm_tag: ArmSide, x: float = 0.0, y: float = 0.0, z: float = 0.0,
                             quat: Sequence[float] | None = None,
                             move_axis: Literal["world", "arm"] = "world") -> SkillResult:
        side = self._side(arm_tag)
        if isinstance(side, SkillResult):
            return side
        bad = self.guard.check_values("displacement", [x, y, z, *(quat or [])])
        if bad is not None:
            return SkillResult.failure(bad)
        now = self._current(side)
        d = np.array([x, y, z], dtype=float)
        if move_axis == "arm":
            d = now.as_matrix()[:3, :3] @ d
        q = now.quat_wxyz if quat is None else tuple(float(v) for v in quat)
        try:
            goal = Pose.from_arrays(now.p + d, q)
        except ValueError as e:
            return SkillResult.failure(f"displacement: {e}")
        return self._run(lambda log_: self._result(self._move(side, goal, log_, "displace"), side))

    def move_to_pose(self, arm_tag: ArmSide, target_pose: Sequence[float]) -> SkillResult:
        side = self._side(arm_tag)
        if isinstance(side, SkillResult):
            return side
        goal = parse_pose_list(target_pose, "target pose")
        if isinstance(goal, str):
            return SkillResult.failure(goal)
        return self._run(lambda log_: self._result(self._move(side, goal, log_, "move"), side))

    def close_gripper(self, arm_tag: ArmSide, pos: float = 0.0) -> SkillResult:
        return self._gripper_skill(arm_tag, pos, "close")

    def open_gripper(self, arm_tag: ArmSide, pos: float = 1.0) -> SkillResult:
        return self._gripper_skill(arm_tag, pos, "open")

    def back_to_origin(self, arm_tag: ArmSide) -> SkillResult:
        """Move to the arm's home joint configuration (joint path checked by the guard)."""
        side = self._side(arm_tag)
        if isinstance(side, SkillResult):
            return side
        arm = self.dual_arm.arm(side)
        home = np.asarray(getattr(getattr(arm, "config", None), "home_joints_rad", ()), dtype=float)
        if home.size == 0:
            return SkillResult.failure(f"the {side} arm has no home configuration")

        def body(log_: list[Command]) -> SkillResult:
            q0 = arm.joint_positions_rad()
            speed = self.guard.config.max_joint_speed_rad_s * 0.5
            n = max(2, math.ceil(float(np.max(np.abs(home - q0))) / (speed * 0.05)) + 1)
            path = np.linspace(q0, home, n)
            why = self.guard.check_joint_path(side, path, 0.05)
            if why is not None:
                return SkillResult.failure(f"home: {why}")
            log_.append({"arm": side, "kind": "home", "goal_joints_rad": home.tolist(), "waypoints": n})
            if not self.config.dry_run:
                arm.follow_joint_path(path, 0.05)
                self._virtual.pop(side, None)
            return SkillResult.success(arm=side)

        return self._run(body)

    def get_arm_pose(self, arm_tag: ArmSide) -> SkillResult:
        side = self._side(arm_tag)
        if isinstance(side, SkillResult):
            return side
        try:
            return SkillResult.success(pose=self._current(side).as_list())
        except DriverError as e:
            return SkillResult.failure(f"cannot read the {side} arm's pose: {e}")

    def execute_ee_action(self, action: Sequence[float]) -> SkillResult:
        """16 values: per arm (left, then right) [x, y, z, qw, qx, qy, qz, gripper]."""
        vals = [float(v) for v in action]
        if len(vals) != 16:
            return SkillResult.failure(f"an end-effector action has 16 values, got {len(vals)}")
        bad = self.guard.check_values("action", vals)
        if bad is not None:
            return SkillResult.failure(bad)
        goals: dict[ArmSide, Pose] = {}
        chunks: tuple[tuple[ArmSide, list[float]], ...] = (("left", vals[:8]), ("right", vals[8:]))
        for side, chunk in chunks:
            goal = parse_pose_list(chunk[:7], f"{side} pose")
            if isinstance(goal, str):
                return SkillResult.failure(goal)
            goals[side] = goal
        why = self.guard.check_clearance("left", goals["left"], goals["right"])
        if why is not None:
            return SkillResult.failure(why)

        def body(log_: list[Command]) -> SkillResult:
            for side, chunk in chunks:
                grip = chunk[7]
                why = self._move(side, goals[side], log_, "action") or self._gripper(side, grip, log_, "gripper")
                if why is not None:
                    return SkillResult.failure(why)
            return SkillResult.success()

        return self._run(body)

    def _reachable_yaw(self, side: ArmSide, target: NDArray[np.float64], yaw_rad: float) -> float:
        base = getattr(self.dual_arm.arm(side), "base_pose_world", None)
        return reachable_yaw(base, target, yaw_rad) if isinstance(base, Pose) else yaw_rad

    # ---- small helpers ---------------------------------------------------------------------------------------
    def _result(self, why: str | None, side: ArmSide) -> SkillResult:
        return SkillResult.failure(why) if why is not None else SkillResult.success(arm=side)

    def _gripper_skill(self, arm_tag: ArmSide, pos: float, label: str) -> SkillResult:
        side = self._side(arm_tag)
        if isinstance(side, SkillResult):
            return side
        return self._run(lambda log_: self._result(self._gripper(side, float(pos), log_, label), side))
