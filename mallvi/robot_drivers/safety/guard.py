"""SafetyGuard: the check every motion command passes before it reaches an arm, in simulation and on the rig.

A check returns ``None`` when the command is allowed and a human-readable reason when it is refused; callers turn
a refusal into a failed ``SkillResult`` of kind ``REFUSED_BY_GUARD`` (``refused``). Nothing here raises for an unsafe
command.

Checks (all limits are ``SafetyConfig`` fields, world frame, metres and radians):
- NaN/inf rejection of poses, joint paths and gripper values;
- a workspace box per arm for the end-effector and the grasp centre (``tcp``);
- the table plane: neither the end-effector nor the grasp centre below ``table_top_z_m + table_margin_m``;
- the step per command: end-effector translation ≤ ``max_step_m`` and rotation ≤ ``max_step_rad``;
- joint paths: within joint limits and no jump larger than ``max_joint_step_rad`` between waypoints;
- speed: joint paths no faster than ``max_joint_speed_rad_s``, end-effector paths no faster than ``max_ee_speed_m_s``;
- inter-arm clearance: the two grippers (end-effector to grasp-centre segments) at least ``min_arm_clearance_m`` apart;
- end-effector paths clear of a point cloud (e.g. the depth camera's) by ``gripper_radius_m`` (``cloud_collision``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.contracts.skills import Failure, FailureKind

Vec3 = tuple[float, float, float]
Box = tuple[Vec3, Vec3]
START_EXCURSION_RAD = 0.05  # a joint contact pushed at most this far past a limit may still move back


def _default_workspace() -> dict[ArmSide, Box]:
    return {
        "left": ((-0.80, -0.55, 0.60), (0.40, 0.45, 1.55)),
        "right": ((-0.40, -0.55, 0.60), (0.80, 0.45, 1.55)),
    }


@dataclass(frozen=True)
class SafetyConfig:
    """Limits of the safety guard.

    Attributes:
        workspace_m: per arm, (min xyz, max xyz) box the end-effector and grasp centre must stay in (world frame).
        table_top_z_m: table-top height; None disables the table-plane check.
        table_margin_m: how far above the table top the grasp centre must stay.
        tcp_offset_m: distance from the end-effector frame to the grasp centre along its x (approach) axis.
        max_step_m: largest end-effector translation one command may ask for.
        max_step_rad: largest end-effector rotation one command may ask for.
        max_joint_step_rad: largest joint change between two consecutive waypoints of a joint path.
        joint_limits_rad: per arm, (lower, upper) per joint; None disables the joint-limit check.
        max_joint_speed_rad_s: fastest joint speed a joint path may ask for (any joint).
        max_ee_speed_m_s: fastest end-effector speed an end-effector path may ask for.
        min_arm_clearance_m: smallest allowed distance between the two arms' gripper segments.
        gripper_radius_m: radius around the gripper segment that must be free of point-cloud points (when no
            ``gripper_boxes_m`` are given).
        gripper_boxes_m: the gripper as boxes in the end-effector frame (``gripper_shape``); when given, the
            depth-cloud check keeps ``cloud_margin_m`` around them instead of the capsule.
        cloud_margin_m: clearance from cloud points around ``gripper_boxes_m``.
        cloud_floor_margin_m: cloud points less than this above the table top are the table (depth noise), not
            obstacles.
    """

    workspace_m: Mapping[ArmSide, Box] = field(default_factory=_default_workspace)
    table_top_z_m: float | None = None
    table_margin_m: float = 0.004
    tcp_offset_m: float = 0.12
    max_step_m: float = 1.0
    max_step_rad: float = 2 * math.pi
    max_joint_step_rad: float = 0.5
    joint_limits_rad: Mapping[ArmSide, tuple[tuple[float, float], ...]] | None = None
    max_joint_speed_rad_s: float = 2.0
    max_ee_speed_m_s: float = 0.5
    min_arm_clearance_m: float = 0.10
    gripper_radius_m: float = 0.045
    gripper_boxes_m: tuple[Box, ...] = ()
    cloud_margin_m: float = 0.01
    cloud_floor_margin_m: float = 0.004

    def __post_init__(self) -> None:
        for side in ("left", "right"):
            if side not in self.workspace_m:
                raise ValueError(f"workspace_m needs a box for the {side} arm")
            lo, hi = self.workspace_m[side]
            if len(lo) != 3 or len(hi) != 3 or any(a >= b for a, b in zip(lo, hi, strict=True)):
                raise ValueError(f"workspace box of the {side} arm must be (min xyz, max xyz) with min < max")
        scalars = {
            "table_margin_m": self.table_margin_m,
            "tcp_offset_m": self.tcp_offset_m,
            "max_step_m": self.max_step_m,
            "max_step_rad": self.max_step_rad,
            "max_joint_step_rad": self.max_joint_step_rad,
            "max_joint_speed_rad_s": self.max_joint_speed_rad_s,
            "max_ee_speed_m_s": self.max_ee_speed_m_s,
            "min_arm_clearance_m": self.min_arm_clearance_m,
            "gripper_radius_m": self.gripper_radius_m,
            "cloud_margin_m": self.cloud_margin_m,
            "cloud_floor_margin_m": self.cloud_floor_margin_m,
        }
        for name, value in scalars.items():
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite non-negative number, got {value}")
        if self.max_step_m == 0 or self.max_joint_step_rad == 0:
            raise ValueError("max_step_m and max_joint_step_rad must be positive")
        if self.max_joint_speed_rad_s == 0 or self.max_ee_speed_m_s == 0:
            raise ValueError("max_joint_speed_rad_s and max_ee_speed_m_s must be positive")
        if self.table_top_z_m is not None and not math.isfinite(self.table_top_z_m):
            raise ValueError("table_top_z_m must be finite or None")
        if self.joint_limits_rad is not None:
            for side, limits in self.joint_limits_rad.items():
                if any(lo > hi for lo, hi in limits):
                    raise ValueError(f"joint limits of the {side} arm have lower > upper")


def _finite(values: Sequence[float] | NDArray[np.float64]) -> bool:
    return bool(np.all(np.isfinite(np.asarray(values, dtype=float))))


def _rotation_angle_rad(q_a: NDArray[np.float64], q_b: NDArray[np.float64]) -> float:
    dot = abs(float(np.dot(q_a / np.linalg.norm(q_a), q_b / np.linalg.norm(q_b))))
    return 2.0 * math.acos(min(1.0, dot))


def refused(reason: str) -> Failure:
    """A guard refusal as a typed skill failure (kind ``REFUSED_BY_GUARD``; nothing moved)."""
    return Failure(FailureKind.REFUSED_BY_GUARD, reason)


class SafetyGuard:
    """Checks motion commands against a ``SafetyConfig``; every method returns None (allowed) or a reason."""

    def __init__(self, config: SafetyConfig | None = None) -> None:
        self._config = config or SafetyConfig()

    @property
    def config(self) -> SafetyConfig:
        return self._config

    def reconfigure(self, **changes: object) -> None:
        """Replace some limits (validated like a new config), e.g. ``reconfigure(table_top_z_m=0.73)``."""
        self._config = replace(self._config, **changes)  # type: ignore[arg-type]

    def check_values(self, what: str, values: Sequence[float] | NDArray[np.float64]) -> str | None:
        """Reject NaN/inf in any command vector."""
        if not _finite(values):
            return f"{what} contains NaN or infinite values: {list(np.asarray(values, dtype=float))}"
        return None

    def check_pose(self, side: ArmSide, pose: Pose, current: Pose | None = None) -> str | None:
        """Check an end-effector target pose (world frame) for ``side``, optionally against the current pose."""
        cfg = self._config
        if not (_finite(pose.position_m) and _finite(pose.quat_wxyz)):
            return f"target pose for the {side} arm contains NaN or infinite values"
        qn = float(np.linalg.norm(pose.q))
        if abs(qn - 1.0) > 1e-3:
            return f"target orientation for the {side} arm is not a unit quaternion (norm {qn:.3f})"
        T = pose.as_matrix()
        tcp = T[:3, 3] + cfg.tcp_offset_m * T[:3, 0]
        lo, hi = (np.asarray(v, dtype=float) for v in cfg.workspace_m[side])
        for label, point in (("end-effector", pose.p), ("grasp centre", tcp)):
            if np.any(point < lo) or np.any(point > hi):
                return (
                    f"{label} target {np.round(point, 3).tolist()} is outside the {side} arm's workspace "
                    f"{np.round(lo, 3).tolist()}..{np.round(hi, 3).tolist()}"
                )
        if cfg.table_top_z_m is not None:
            floor = cfg.table_top_z_m + cfg.table_margin_m
            lowest = min(float(pose.p[2]), float(tcp[2]))
            if lowest < floor:
                return f"target would put the {side} gripper at z={lowest:.3f}, below the table limit z={floor:.3f}"
        if current is not None:
            step_m = float(np.linalg.norm(pose.p - current.p))
            if step_m > cfg.max_step_m:
                return f"{side} arm step of {step_m:.3f} m exceeds the limit of {cfg.max_step_m:.3f} m per command"
            step_rad = _rotation_angle_rad(pose.q, current.q)
            if step_rad > cfg.max_step_rad + 1e-9:
                return f"{side} arm rotation of {step_rad:.3f} rad exceeds the limit of {cfg.max_step_rad:.3f} rad"
        return None

    def check_gripper(self, side: ArmSide, opening: float) -> str | None:
        """A gripper command must be a finite number in 0..1."""
        if not math.isfinite(opening) or not 0.0 <= opening <= 1.0:
            return f"gripper opening for the {side} arm must be within 0..1, got {opening}"
        return None

    def check_joint_path(self, side: ArmSide, path_rad: NDArray[np.float64], dt_s: float) -> str | None:
        """Check an N×dof joint path sampled every ``dt_s`` seconds: finite, within limits (a joint that starts up
        to ``START_EXCURSION_RAD`` outside them may only move back towards them), no large jumps."""
        cfg = self._config
        path = np.asarray(path_rad, dtype=float)
        if path.ndim != 2 or path.shape[0] == 0:
            return f"joint path for the {side} arm must be a non-empty N×dof array, got shape {path.shape}"
        if not _finite(path.ravel()) or not math.isfinite(dt_s) or dt_s <= 0:
            return f"joint path for the {side} arm contains NaN/inf values or a bad time step ({dt_s})"
        if cfg.joint_limits_rad is not None and side in cfg.joint_limits_rad:
            limits = np.asarray(cfg.joint_limits_rad[side], dtype=float)
            if limits.shape[0] != path.shape[1]:
                return f"joint path for the {side} arm has {path.shape[1]} joints, limits cover {limits.shape[0]}"
            # An arm that contact pushed a little past a limit may move back, but no joint may go further out.
            start = np.clip(path[0], limits[:, 0] - START_EXCURSION_RAD, limits[:, 1] + START_EXCURSION_RAD)
            low = path < np.minimum(limits[:, 0], start) - 1e-3
            high = path > np.maximum(limits[:, 1], start) + 1e-3
            if np.any(low | high):
                j = int(np.argwhere(low | high)[0, 1])
                return f"joint path for the {side} arm leaves the limits of joint {j + 1}"
        if path.shape[0] > 1:
            jump = float(np.max(np.abs(np.diff(path, axis=0))))
            if jump > cfg.max_joint_step_rad:
                return (
                    f"joint path for the {side} arm jumps {jump:.3f} rad between waypoints "
                    f"(limit {cfg.max_joint_step_rad:.3f})"
                )
            speed = jump / dt_s
            if speed > cfg.max_joint_speed_rad_s + 1e-9:
                return (
                    f"joint path for the {side} arm is too fast: {speed:.2f} rad/s "
                    f"(limit {cfg.max_joint_speed_rad_s:.2f} rad/s)"
                )
        return None

    def tcp_point(self, pose: Pose) -> NDArray[np.float64]:
        """The grasp centre of an end-effector pose (``tcp_offset_m`` along its x axis)."""
        T = pose.as_matrix()
        return np.asarray(T[:3, 3] + self._config.tcp_offset_m * T[:3, 0], dtype=float)

    def check_ee_path(self, side: ArmSide, poses: Sequence[Pose], dt_s: float, current: Pose | None = None
                      ) -> str | None:
        """Check an end-effector path (one pose every ``dt_s`` s): every pose allowed, no step faster than
        ``max_ee_speed_m_s`` (from ``current`` to the first pose too), no single step over ``max_step_m``."""
        cfg = self._config
        if not poses:
            return f"end-effector path for the {side} arm is empty"
        if not math.isfinite(dt_s) or dt_s <= 0:
            return f"end-effector path for the {side} arm has a bad time step ({dt_s})"
        previous = current
        for i, pose in enumerate(poses):
            why = self.check_pose(side, pose, current=previous)
            if why is not None:
                return f"waypoint {i}: {why}"
            if previous is not None:
                speed = float(np.linalg.norm(pose.p - previous.p)) / dt_s
                if speed > cfg.max_ee_speed_m_s + 1e-9:
                    return (f"{side} arm end-effector path is too fast at waypoint {i}: {speed:.3f} m/s "
                            f"(limit {cfg.max_ee_speed_m_s:.3f} m/s)")
            previous = pose
        return None

    def check_clearance(self, side: ArmSide, pose: Pose, other_pose: Pose) -> str | None:
        """The gripper of ``side`` at ``pose`` must stay ``min_arm_clearance_m`` from the other arm's gripper."""
        from mallvi.robot_drivers.safety.cloud_collision import segment_distance_m

        if not (_finite(pose.as_list()) and _finite(other_pose.as_list())):
            return f"clearance check for the {side} arm got NaN or infinite poses"
        d = segment_distance_m(pose.p, self.tcp_point(pose), other_pose.p, self.tcp_point(other_pose))
        if d < self._config.min_arm_clearance_m:
            other = "right" if side == "left" else "left"
            return (f"{side} gripper would come {d:.3f} m from the {other} gripper "
                    f"(minimum clearance {self._config.min_arm_clearance_m:.3f} m)")
        return None

    def check_path_against_cloud(self, side: ArmSide, poses: Sequence[Pose], cloud_world: NDArray[np.float64],
                                 ignore_boxes: Sequence[tuple[NDArray[np.float64], NDArray[np.float64]]] = ()
                                 ) -> str | None:
        """No point of ``cloud_world`` (N×3, world frame) near the gripper along the path: within
        ``gripper_radius_m`` of its segment, or within ``cloud_margin_m`` of its ``gripper_boxes_m``. Points
        inside ``ignore_boxes`` ((centre, half extent) pairs: the object to be grasped) and less than
        ``cloud_floor_margin_m`` above the table plane (checked separately) do not count."""
        from mallvi.robot_drivers.safety.cloud_collision import first_cloud_hit, obstacle_points
        from mallvi.robot_drivers.safety.gripper_shape import first_box_hit

        cfg = self._config
        floor = None if cfg.table_top_z_m is None else cfg.table_top_z_m + max(cfg.table_margin_m,
                                                                                cfg.cloud_floor_margin_m)
        if cfg.gripper_boxes_m:
            obstacles = obstacle_points(cloud_world, ignore_boxes, floor)
            hit = first_box_hit([p.as_matrix() for p in poses], cfg.gripper_boxes_m, obstacles, cfg.cloud_margin_m)
            needs = cfg.cloud_margin_m
        else:
            hit = first_cloud_hit([(p.p, self.tcp_point(p)) for p in poses], cloud_world, cfg.gripper_radius_m,
                                  ignore_boxes=ignore_boxes, floor_z_m=floor)
            needs = cfg.gripper_radius_m
        if hit is not None:
            i, point, d = hit
            return (f"{side} gripper path waypoint {i} passes {d:.3f} m from an obstacle point at "
                    f"{np.round(point, 3).tolist()} (needs {needs:.3f} m)")
        return None
