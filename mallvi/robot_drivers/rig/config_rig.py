"""Configuration of the real rig: calibration, CAN channels, camera, table height, safety (validated, immutable)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mallvi.robot_drivers.realsense.config_realsense import RealSenseConfig
from mallvi.robot_drivers.rig_skills.config_rig_skills import RigSkillsConfig
from mallvi.robot_drivers.safety.guard import SafetyConfig


@dataclass(frozen=True)
class RigConfig:
    """What the real rig needs to start.

    Attributes:
        calibration_path: YAML written by `mallvi calibrate` (camera pose, intrinsics, both arm mounts).
        can_left, can_right: CAN channels of the two Pipers.
        bus_type: "socketcan" on the rig, "virtual" for rehearsals against the Piper emulator.
        camera: RealSense settings (serial, resolution, or a recording to play back).
        table_top_z_m: table height in the world frame; the guard keeps the grippers above it.
        dry_run: plan and check every command, send none (the arms are connected but not enabled).
        use_depth_cloud: check every end-effector path against the camera's depth point cloud.
        use_mplib_planner: plan every move with mplib (screw motion on the Piper URDF, the depth cloud as an
            octree obstacle) and send joint paths; otherwise the firmware follows end-effector targets.
        skills: motion settings of the skills.
        safety: guard limits; workspace boxes default to the guard's defaults.
    """

    calibration_path: str
    can_left: str = "can_left"
    can_right: str = "can_right"
    bus_type: str = "socketcan"
    camera: RealSenseConfig = field(default_factory=RealSenseConfig)
    table_top_z_m: float = 0.75
    dry_run: bool = False
    use_depth_cloud: bool = True
    use_mplib_planner: bool = False
    skills: RigSkillsConfig = field(default_factory=RigSkillsConfig)
    safety: SafetyConfig | None = None

    def __post_init__(self) -> None:
        if self.can_left == self.can_right:
            raise ValueError(f"the two arms need different CAN channels, both are {self.can_left!r}")
        if not math.isfinite(self.table_top_z_m):
            raise ValueError("table_top_z_m must be finite")
