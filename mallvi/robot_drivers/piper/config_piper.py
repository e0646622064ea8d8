"""Configuration of one AgileX Piper arm (validated, immutable)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mallvi.contracts.geometry import ArmSide, Pose

# Joint limits of the Piper in radians (piper_sdk's C_PiperParamManager and JointCtrl docstring).
PIPER_JOINT_LIMITS_RAD: tuple[tuple[float, float], ...] = (
    (-2.6179, 2.6179),
    (0.0, 3.14),
    (-2.967, 0.0),
    (-1.745, 1.745),
    (-1.22, 1.22),
    (-2.09439, 2.09439),
)

CAN_BUS_TYPES = ("socketcan", "slcan", "virtual")


@dataclass(frozen=True)
class PiperConfig:
    """One Piper arm on one CAN channel.

    Attributes:
        side: which arm of the rig this is ("left"/"right").
        can_name: CAN channel ("can_left" after `ip link set can0 name can_left`, or any name on a virtual bus).
        bus_type: python-can interface: "socketcan" on a rig, "virtual" for the emulator and the tests.
        check_can_port: let piper_sdk check that the socketcan port exists, is UP and runs at 1 Mbit/s.
        base_pose_world: the arm's mount, the pose of its base frame in the world frame (T_world_base).
        flange_to_ee_m: distance from the flange to mallvi's end-effector point along the approach axis
            (the grasp centre is 0.12 m further).
        speed_percent: the firmware's speed rate for joint and end-pose moves (1..100).
        gripper_max_stroke_m: gripper stroke at opening 1.0.
        gripper_effort_nm: gripping torque sent with every gripper command (0..5 N·m).
        feedback_timeout_s: feedback older than this is treated as a lost connection.
        enable_timeout_s: how long enable() waits for all six drivers to report "enabled".
        motion_timeout_s: how long a move waits for the arm to reach its target.
        joint_tolerance_rad / position_tolerance_m / orientation_tolerance_rad: "target reached" thresholds (an
            end-effector target is reached when both its position and its orientation are).
        home_joints_rad: the joint configuration that home() moves to.
    """

    side: ArmSide
    can_name: str
    bus_type: str = "socketcan"
    check_can_port: bool = True
    base_pose_world: Pose = field(default_factory=lambda: Pose((0.0, 0.0, 0.0)))
    flange_to_ee_m: float = 0.01
    speed_percent: int = 30
    gripper_max_stroke_m: float = 0.07
    gripper_effort_nm: float = 1.0
    feedback_timeout_s: float = 1.0
    enable_timeout_s: float = 5.0
    motion_timeout_s: float = 20.0
    joint_tolerance_rad: float = math.radians(1.0)
    position_tolerance_m: float = 0.003
    orientation_tolerance_rad: float = math.radians(1.5)
    home_joints_rad: tuple[float, float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        if self.side not in ("left", "right"):
            raise ValueError(f"side must be 'left' or 'right', got {self.side!r}")
        if not self.can_name or not self.can_name.strip():
            raise ValueError("can_name must name a CAN channel, e.g. 'can_left'")
        if self.bus_type not in CAN_BUS_TYPES:
            raise ValueError(f"bus_type must be one of {CAN_BUS_TYPES}, got {self.bus_type!r}")
        if not 1 <= self.speed_percent <= 100:
            raise ValueError(f"speed_percent must be in 1..100, got {self.speed_percent}")
        if not 0.0 < self.gripper_max_stroke_m <= 0.1:
            raise ValueError(f"gripper_max_stroke_m must be in (0, 0.1] m, got {self.gripper_max_stroke_m}")
        if not 0.0 <= self.gripper_effort_nm <= 5.0:
            raise ValueError(f"gripper_effort_nm must be in [0, 5] N·m, got {self.gripper_effort_nm}")
        for name in ("feedback_timeout_s", "enable_timeout_s", "motion_timeout_s", "joint_tolerance_rad",
                     "position_tolerance_m", "orientation_tolerance_rad"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number, got {value!r}")
        if not math.isfinite(self.flange_to_ee_m) or abs(self.flange_to_ee_m) > 0.5:
            raise ValueError(f"flange_to_ee_m must be within ±0.5 m, got {self.flange_to_ee_m!r}")
        if len(self.home_joints_rad) != 6:
            raise ValueError(f"home_joints_rad needs 6 values, got {len(self.home_joints_rad)}")
        for i, (q, (lo, hi)) in enumerate(zip(self.home_joints_rad, PIPER_JOINT_LIMITS_RAD, strict=True)):
            if not (math.isfinite(q) and lo <= q <= hi):
                raise ValueError(f"home joint {i + 1} = {q!r} rad is outside the Piper's limits [{lo}, {hi}]")
