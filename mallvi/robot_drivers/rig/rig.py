"""Assembling the real rig: two Pipers, the RealSense, the calibration, the safety guard and the skills.

``make_real_rig(config, world_model)`` is what `mallvi run --robot piper --camera realsense` calls.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.devices import Camera, DualArm
from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.contracts.observation import Observation
from mallvi.contracts.skills import SkillAPI
from mallvi.contracts.world_model import WorldModel
from mallvi.robot_drivers.calibration.calibration_files import RigCalibration, load_rig_calibration
from mallvi.robot_drivers.piper.config_piper import PIPER_JOINT_LIMITS_RAD, PiperConfig
from mallvi.robot_drivers.piper.piper import PiperArm
from mallvi.robot_drivers.realsense.realsense import RealSenseCamera
from mallvi.robot_drivers.rig.config_rig import RigConfig
from mallvi.robot_drivers.rig_skills.rig_skills import RigSkills, RigSkillsConfig
from mallvi.robot_drivers.safety.gripper_shape import PIPER_GRIPPER_BOXES_M
from mallvi.robot_drivers.safety.guard import SafetyConfig, SafetyGuard

log = logging.getLogger(__name__)


def depth_to_world_points(obs: Observation, stride: int = 4, max_points: int = 20000) -> NDArray[np.float64]:
    """Back-project valid depth pixels (every ``stride``-th row/column) to world-frame points (N×3)."""
    depth = obs.depth_m[::stride, ::stride].astype(float)
    v, u = np.mgrid[0:obs.height:stride, 0:obs.width:stride]
    valid = depth > 0
    z = depth[valid]
    x = (u[valid] - obs.K[0, 2]) / obs.K[0, 0] * z
    y = (v[valid] - obs.K[1, 2]) / obs.K[1, 1] * z
    pts_cam = np.column_stack([x, y, z, np.ones_like(z)])
    pts = (obs.T_world_cam @ pts_cam.T).T[:, :3]
    if len(pts) > max_points:
        pts = pts[:: math.ceil(len(pts) / max_points)]
    return np.asarray(pts, dtype=float)


def piper_configs(config: RigConfig, calib: RigCalibration) -> dict[ArmSide, PiperConfig]:
    """Per-arm Piper configurations with the calibrated mounts."""
    missing = [s for s in ("left", "right") if s not in calib.arms]
    if missing:
        raise ValueError(f"the calibration has no mount for the {' and '.join(missing)} arm; "
                         "run `mallvi calibrate` with views of both arms")
    cans = {"left": config.can_left, "right": config.can_right}
    return {side: PiperConfig(side=side, can_name=cans[side], bus_type=config.bus_type,
                              base_pose_world=Pose.from_matrix(calib.arms[side].T_world_base))
            for side in ("left", "right")}


def make_real_rig(config: RigConfig, world_model: WorldModel,
                  camera_source: object | None = None) -> tuple[DualArm, Camera, SkillAPI]:
    """Connect (and, unless dry-run, enable) both Pipers, start the camera and build the guarded skills.

    Raises CalibrationFileError for a missing/malformed calibration, DeviceNotConnectedError when an arm or the
    camera does not answer. ``camera_source`` replaces the RealSense device (tests feed a synthetic syncer).
    """
    calib = load_rig_calibration(config.calibration_path)
    cfgs = piper_configs(config, calib)
    dual = DualArm(left=PiperArm(cfgs["left"]), right=PiperArm(cfgs["right"]))
    camera = RealSenseCamera(config.camera, calib.T_world_cam, source=camera_source)
    started: list[Callable[[], None]] = []
    try:
        for arm in (dual.left, dual.right):
            arm.connect()
            started.append(arm.disconnect)
            if not config.dry_run:
                assert isinstance(arm, PiperArm)
                arm.enable()
        camera.start()
        started.append(camera.stop)
    except Exception:
        for undo in reversed(started):
            undo()
        raise
    skills: SkillAPI = build_rig_skills(config, dual, camera, world_model,
                                        {side: c.base_pose_world for side, c in cfgs.items()})
    log.info("real rig ready (dry run: %s)", config.dry_run)
    return dual, camera, skills


PIPER_CLOUD_FLOOR_MARGIN_M = 0.012  # ~3 sigma of a D435's depth noise at 1 m: closer to the table is the table


def piper_safety(table_top_z_m: float | None) -> SafetyConfig:
    """The guard's limits for two Pipers: their joint limits, their gripper's shape for the depth-cloud check."""
    limits = tuple(PIPER_JOINT_LIMITS_RAD)
    return SafetyConfig(table_top_z_m=table_top_z_m, joint_limits_rad={"left": limits, "right": limits},
                        gripper_boxes_m=PIPER_GRIPPER_BOXES_M, cloud_floor_margin_m=PIPER_CLOUD_FLOOR_MARGIN_M)


def build_rig_skills(config: RigConfig, dual: DualArm, camera: Camera, world_model: WorldModel,
                     mounts: dict[ArmSide, Pose]) -> RigSkills:
    """The guarded skills over connected arms and a started camera (the depth cloud, the optional planner)."""
    safety = config.safety or piper_safety(config.table_top_z_m)
    cloud = (lambda: depth_to_world_points(camera.read())) if config.use_depth_cloud else None
    planner = None
    if config.use_mplib_planner:
        from mallvi.robot_drivers.rig_skills.rig_planner import MplibRigPlanner

        planner = MplibRigPlanner(mounts)
    return RigSkills(dual, world_model, SafetyGuard(safety), planner=planner, config=_with_dry_run(config),
                     cloud_world=cloud)


def _with_dry_run(config: RigConfig) -> RigSkillsConfig:
    from dataclasses import replace

    return replace(config.skills, dry_run=config.dry_run)
