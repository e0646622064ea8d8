"""The real rig's motion core: guarded straight end-effector moves, gripper commands and the skill runner.

``RigMotionCore`` is the part of ``RigSkills`` that ``rig_upright`` composes its skill from (the ``PivotRig``
protocol there). Every move checks its whole straight path with the ``SafetyGuard`` (and the depth cloud, and
the joint path when a planner is configured) before the first command is sent; a refusal is a typed ``Failure``.
With ``config.dry_run`` nothing is sent and the planned poses are remembered instead. A driver fault stops both
arms.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.devices import DualArm
from mallvi.contracts.errors import DriverError
from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.contracts.skills import Failure, FailureKind, SkillResult
from mallvi.robot_drivers.piper.piper import PiperArm
from mallvi.robot_drivers.piper.piper_ik import first_unreachable
from mallvi.robot_drivers.piper.piper_kinematics import link_origins_base
from mallvi.robot_drivers.rig_skills.config_rig_skills import Command, RigSkillsConfig
from mallvi.robot_drivers.rig_skills.rig_geometry import reachable_yaw, straight_path
from mallvi.robot_drivers.rig_skills.rig_joint_moves import all_reachable, joint_space_move
from mallvi.robot_drivers.safety.cloud_collision import obstacle_points, without_points_near
from mallvi.robot_drivers.safety.gripper_shape import without_points_in_boxes
from mallvi.robot_drivers.safety.guard import SafetyGuard, refused

log = logging.getLogger(__name__)

SELF_FILTER_RADIUS_M = 0.06  # depth points this close to an arm's own gripper or wrist are the arm itself
SELF_FILTER_BOX_MARGIN_M = 0.025  # ... or this close to its gripper's boxes (calibration error and depth noise)
WRIST_BACK_M = 0.15
SUPPORT_DEPTH_M = 0.03  # the surface an object stands on, this deep under its bottom, is not an obstacle to its grasp
SUPPORT_HALF_XY_M = 0.05  # ... nor, this wide around the place point, to a place


def support_box(xy_m: NDArray[np.float64], bottom_z_m: float, half_xy_m: float
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(centre, half extent) of the surface right under an object whose bottom is at ``bottom_z_m``."""
    centre = np.array([float(xy_m[0]), float(xy_m[1]), bottom_z_m - SUPPORT_DEPTH_M / 2])
    return centre, np.array([half_xy_m, half_xy_m, SUPPORT_DEPTH_M / 2 + 0.005])

def arm_skeleton_world(T_world_base: Pose, q_rad: NDArray[np.float64]) -> NDArray[np.float64]:
    """A Piper's joint origins from base to flange in the world frame (7×3)."""
    pts = link_origins_base(q_rad)
    T = T_world_base.as_matrix()
    return np.asarray(pts @ T[:3, :3].T + T[:3, 3], dtype=float)


JointPlanner = Callable[[ArmSide, list[Pose], NDArray[np.float64], float], NDArray[np.float64] | str]
"""``(side, ee_path, q_start, dt_s) -> joint path | reason``, e.g. ``MplibRigPlanner``."""


@runtime_checkable
class CartesianArm(Protocol):
    """An arm that can stream end-effector targets (the Piper's firmware does the inverse kinematics)."""

    def follow_ee_path(self, poses_world: Sequence[Pose], dt_s: float) -> None: ...


class RigMotionCore:
    """Motion methods shared by the rig's skills; the class using it provides the attributes below."""

    dual_arm: DualArm
    guard: SafetyGuard
    planner: JointPlanner | None
    config: RigSkillsConfig
    cloud_world: Callable[[], NDArray[np.float64]] | None
    _virtual: dict[str, Pose]
    _virtual_gripper: dict[str, float]

    def current_pose(self, side: ArmSide) -> Pose:
        """The end-effector pose ``side`` is at (in a dry run: where the last planned command left it)."""
        return self._virtual.get(side) or self.dual_arm.arm(side).ee_pose()

    def _other_pose(self, side: ArmSide) -> Pose:
        return self.current_pose("right" if side == "left" else "left")

    def held_drop_m(self, side: ArmSide) -> float:
        """How far the object ``side`` holds reaches below its grasp centre (0 when it holds nothing)."""
        return 0.0

    def _arm_segments(self) -> list[tuple[NDArray[np.float64], NDArray[np.float64]]]:
        """Where each arm stands now, as segments the depth camera sees it along: gripper and wrist (from
        ``WRIST_BACK_M`` behind the end effector to the grasp centre), for a Piper its links from the joint
        feedback, and an object it holds (from the grasp centre down to the object's bottom)."""
        segments = []
        for arm in (self.dual_arm.left, self.dual_arm.right):
            pose = arm.ee_pose()
            approach = pose.as_matrix()[:3, 0]
            tcp = self.guard.tcp_point(pose)
            segments.append((pose.p - WRIST_BACK_M * approach, tcp))
            if isinstance(arm, PiperArm):
                links = arm_skeleton_world(arm.base_pose_world, arm.joint_positions_rad())
                segments.extend((links[i], links[i + 1]) for i in range(len(links) - 1))
                segments.append((links[-1], pose.p))
            drop_m = self.held_drop_m(arm.side)
            if drop_m > 0:
                segments.append((tcp, tcp - np.array([0.0, 0.0, drop_m])))
        return segments

    def _reachable_path(self, side: ArmSide, start: Pose, goal: Pose
                        ) -> tuple[list[Pose], NDArray[np.float64] | None] | str:
        """How to get to ``goal``: the straight path; when the arm cannot follow it (a waypoint without a joint
        solution for a Piper), turning in place first and then the straight line; failing that, a joint-space
        move (joints interpolated to a solution at the goal, sent as a joint path; its end-effector path is
        returned for the guard). (end-effector path, joint path or None), or a reason when none can be followed."""
        path = straight_path(start, goal, self.config.step_m)
        arm = self.dual_arm.arm(side)
        mount = getattr(arm, "base_pose_world", None)
        if not self.config.check_reach or not isinstance(mount, Pose) or not isinstance(arm, PiperArm):
            return path, None
        q = arm.joint_positions_rad()
        bad = first_unreachable(mount, path, q, arm.config.flange_to_ee_m)
        if bad is None:
            return path, None
        turned = Pose.from_arrays(start.p, goal.q)
        two_step = straight_path(start, turned, self.config.step_m) + straight_path(turned, goal, self.config.step_m)
        if first_unreachable(mount, two_step, q, arm.config.flange_to_ee_m) is None:
            return two_step, None
        joint_move = joint_space_move(mount, q, goal, arm.config.flange_to_ee_m, self.config.step_m)
        if joint_move is not None:
            return joint_move
        return (f"the {side} arm cannot reach waypoint {bad} of the path (at {np.round(path[bad].p, 3).tolist()} m): "
                "no joint solution")

    def _dt_s(self, path: list[Pose], start: Pose) -> float:
        longest = max(float(np.linalg.norm(b.p - a.p)) for a, b in zip([start, *path[:-1]], path, strict=True))
        return max(longest / self.config.ee_speed_m_s, 0.01)

    def move_straight(self, side: ArmSide, goal: Pose, log_: list[Command], label: str,
                      ignore: Sequence[tuple[NDArray[np.float64], NDArray[np.float64]]] = ()) -> Failure | None:
        """Check the whole straight path to ``goal`` and execute it (unless dry-run); None, or why not (nothing
        moved): ``REFUSED_BY_GUARD``, ``NO_PLAN`` (the planner hook found none) or ``DEVICE_FAULT``."""
        start = self.current_pose(side)
        reachable = self._reachable_path(side, start, goal)
        if isinstance(reachable, str):
            return Failure(FailureKind.UNREACHABLE, f"{label}: {reachable}")
        path, joint_path = reachable
        dt_s = self._dt_s(path, start)
        why = self.guard.check_ee_path(side, path, dt_s, current=start)
        if why is None:
            other = self._other_pose(side)
            why = next((w for p in path if (w := self.guard.check_clearance(side, p, other)) is not None), None)
        cloud = self.cloud_world() if self.cloud_world is not None and why is None else None
        if cloud is not None:
            cloud = without_points_near(cloud, self._arm_segments(), SELF_FILTER_RADIUS_M)
            boxes = self.guard.config.gripper_boxes_m
            if boxes:
                grippers = [a.ee_pose().as_matrix() for a in (self.dual_arm.left, self.dual_arm.right)]
                cloud = without_points_in_boxes(cloud, grippers, boxes, SELF_FILTER_BOX_MARGIN_M)
            why = self.guard.check_path_against_cloud(side, path, cloud, ignore_boxes=ignore)
        if why is not None:
            return refused(f"{label}: {why}")
        if joint_path is not None:
            why = self.guard.check_joint_path(side, joint_path, dt_s)
            if why is not None:
                return refused(f"{label}: {why}")
        elif self.planner is not None:
            set_cloud = getattr(self.planner, "set_point_cloud", None)
            if cloud is not None and callable(set_cloud):  # the planner sees the same obstacles as the guard
                cfg = self.guard.config
                floor = None if cfg.table_top_z_m is None else cfg.table_top_z_m + cfg.table_margin_m
                set_cloud(obstacle_points(cloud, ignore, floor))
            planned = self.planner(side, path, self.dual_arm.arm(side).joint_positions_rad(), dt_s)
            if isinstance(planned, str):
                return Failure(FailureKind.NO_PLAN, f"{label}: planning failed: {planned}")
            joint_path = planned
            why = self.guard.check_joint_path(side, joint_path, dt_s)
            if why is not None:
                return refused(f"{label}: {why}")
        arm = self.dual_arm.arm(side)
        if joint_path is None and not self.config.dry_run and not isinstance(arm, CartesianArm):
            return Failure(FailureKind.DEVICE_FAULT, f"{label}: the {side} arm driver cannot follow end-effector "
                                                     "paths and no planner is configured")
        log_.append({"arm": side, "kind": label, "goal": goal.as_list(), "waypoints": len(path), "dt_s": dt_s,
                     "joint_path": joint_path is not None})
        if self.config.dry_run:
            self._virtual[side] = goal
        elif joint_path is not None:
            arm.follow_joint_path(joint_path, dt_s)
        else:
            arm.follow_ee_path(path, dt_s)  # type: ignore[attr-defined]
        return None

    def command_gripper(self, side: ArmSide, opening: float, log_: list[Command], label: str) -> Failure | None:
        """Command a gripper opening (0 closed .. 1 open) after the guard's check; None, or the refusal."""
        why = self.guard.check_gripper(side, opening)
        if why is not None:
            return refused(f"{label}: {why}")
        log_.append({"arm": side, "kind": label, "opening": opening})
        if self.config.dry_run:
            self._virtual_gripper[side] = opening
        else:
            self.dual_arm.arm(side).set_gripper(opening)
        return None

    def gripper_opening(self, side: ArmSide) -> float:
        """The gripper's opening now (in a dry run: the last planned command)."""
        if self.config.dry_run:
            return self._virtual_gripper.get(side, self.dual_arm.arm(side).gripper_opening())
        return self.dual_arm.arm(side).gripper_opening()

    def gripper_stroke_m(self, side: ArmSide) -> float | None:
        """How far the ``side`` gripper opens, if its driver says so."""
        stroke = getattr(getattr(self.dual_arm.arm(side), "config", None), "gripper_max_stroke_m", None)
        return stroke if isinstance(stroke, float) else None

    def base_pose(self, side: ArmSide) -> Pose | None:
        """Where the ``side`` arm is mounted (world frame), if its driver knows."""
        base = getattr(self.dual_arm.arm(side), "base_pose_world", None)
        return base if isinstance(base, Pose) else None

    def can_reach(self, side: ArmSide, poses: Sequence[Pose]) -> bool:
        """Whether ``side`` has a joint solution at each pose in turn (always True without the reach check or for
        an arm whose kinematics are unknown)."""
        arm = self.dual_arm.arm(side)
        if not self.config.check_reach or not isinstance(arm, PiperArm):
            return True
        return all_reachable(arm.base_pose_world, poses, arm.joint_positions_rad(), arm.config.flange_to_ee_m)

    def reachable_yaw(self, side: ArmSide, target: NDArray[np.float64], yaw_rad: float) -> float:
        """Of a top-down grasp's two equivalent finger directions at ``target``, the one ``side`` turns to best."""
        base = self.base_pose(side)
        return reachable_yaw(base, target, yaw_rad) if base is not None else yaw_rad

    def run(self, body: Callable[[list[Command]], SkillResult]) -> SkillResult:
        """Run a skill's body; a driver fault (``DEVICE_FAULT``) or Ctrl-C stops both arms. Adds the command log."""
        commands: list[Command] = []
        try:
            result = body(commands)
        except DriverError as e:
            self._stop_all()
            return SkillResult.failure(f"driver fault, both arms stopped: {e}", FailureKind.DEVICE_FAULT,
                                       commands=commands)
        except KeyboardInterrupt:
            self._stop_all()
            raise
        return SkillResult(result.ok, result.message, {**result.data, "commands": commands,
                                                       "dry_run": self.config.dry_run}, result.kind)

    def _stop_all(self) -> None:
        if self.config.dry_run:
            return
        try:
            self.dual_arm.stop_all()
        except DriverError as e:
            log.error("stopping the arms failed: %s", e)
