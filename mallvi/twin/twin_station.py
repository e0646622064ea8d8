"""``TwinStation``: the rig's Station (``RigStation``: CAN drivers, RealSense, ``RigSkills``, guard, depth-cloud
checks) over the simulated twin, with simulator truth as the success oracle.

What the graph and the skills know comes from the rig's own inputs: the calibration file (camera pose, arm
mounts), the camera's frames and the arms' feedback. The table height is the rig's configuration value (on a rig
a user measures it; the twin's configuration takes the twin's table); the camera must see the table there through
its calibration, or the station refuses to start.
The twin's truth is used only by ``oracle`` to judge success; ``privileged`` says so.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.geometry import ARM_SIDES, ArmSide, Pose
from mallvi.contracts.world_model import WorldModel
from mallvi.robot_drivers.calibration.plausibility import CalibrationCheckError
from mallvi.robot_drivers.rig.config_rig import RigConfig
from mallvi.robot_drivers.rig.rig import build_rig_skills, piper_safety
from mallvi.robot_drivers.rig.rig_station import RigStation
from mallvi.robot_drivers.rig.table_plane import check_table_against_config, table_top_z_from_depth
from mallvi.robot_drivers.rig_skills.rig_skills import RigSkillsConfig
from mallvi.sim_bridge.scene_spec import SceneSpec
from mallvi.sim_bridge.scenes import get_scene
from mallvi.sim_bridge.sim_station import SimOracle
from mallvi.sim_bridge.world import SimWorld
from mallvi.twin.twin_calibration import twin_calibration
from mallvi.twin.twin_rig import TwinRig, attach_twin, open_twin

log = logging.getLogger(__name__)

TWIN_PRIVILEGED = ("success judged by simulator truth",)


class TwinStation(RigStation):
    """The rig's Station on the twin of (scene, seed); ``close()`` also tears the twin down."""

    name = "twin (piper rig on SAPIEN)"

    def __init__(self, twin: TwinRig, config: RigConfig, world_model: WorldModel) -> None:
        mounts: dict[ArmSide, Pose] = {s: twin.arms.arm(s).base_pose_world for s in ARM_SIDES}
        table_z = twin.world.table_top_z  # the rig configuration's table height
        try:
            check_table_against_config(table_top_z_from_depth(twin.camera.read()), table_z)
        except ValueError as e:
            raise CalibrationCheckError(f"{config.calibration_path}: {e}") from e
        safety = replace(config.safety or piper_safety(table_z), table_top_z_m=table_z)
        config = replace(config, table_top_z_m=table_z, safety=safety)
        skills = build_rig_skills(config, twin.arms.dual, twin.camera, world_model, mounts)
        super().__init__(twin.arms.dual, twin.camera, skills, world_model, table_z)
        self.twin = twin
        self.oracle = SimOracle(twin.world)
        self.privileged = TWIN_PRIVILEGED
        log.info("twin station ready: table top at %.3f m", table_z)

    @classmethod
    def open(cls, scene: str | SceneSpec, seed: int, calibration_path: str | Path, world_model: WorldModel, *,
             dry_run: bool = False, contingency: str | None = None) -> TwinStation:
        """Start the twin of (scene, seed) with the drivers' mounts and the camera pose from ``calibration_path``.

        Raises CalibrationFileError for a missing, malformed or implausible file, one made for another arm layout
        than the scene's (LayoutMismatchError), and one the camera's table check refuses (CalibrationCheckError).
        """
        spec = scene if isinstance(scene, SceneSpec) else get_scene(scene)
        mounts, T_world_cam = _calibrated(calibration_path, spec.name, spec.arm_spacing_m)
        twin = open_twin(scene, seed, mounts=mounts, T_world_cam=T_world_cam, enable=not dry_run,
                         contingency=contingency)
        return cls._start(twin, calibration_path, world_model, dry_run)

    @classmethod
    def on_world(cls, world: SimWorld, calibration_path: str | Path, world_model: WorldModel, *,
                 dry_run: bool = False) -> TwinStation:
        """The twin on a world someone else owns (the benchmark's); ``close()`` leaves the world open."""
        mounts, T_world_cam = _calibrated(calibration_path, world.scene_name, world.arm_spacing_m,
                                          world.table_top_z)
        twin = attach_twin(world, mounts=mounts, T_world_cam=T_world_cam, enable=not dry_run)
        return cls._start(twin, calibration_path, world_model, dry_run)

    @classmethod
    def _start(cls, twin: TwinRig, calibration_path: str | Path, world_model: WorldModel,
               dry_run: bool) -> TwinStation:
        try:
            config = RigConfig(calibration_path=str(calibration_path), bus_type="virtual", dry_run=dry_run,
                               skills=RigSkillsConfig(check_reach=True))
            return cls(twin, config, world_model)
        except Exception:
            twin.close()
            raise

    def close(self) -> None:
        if self._closed:
            return
        super().close()
        self.twin.close()


def _calibrated(calibration_path: str | Path, scene_name: str, arm_spacing_m: float,
                table_top_z_m: float | None = None) -> tuple[dict[ArmSide, Pose], NDArray[np.float64]]:
    """The arm mounts and the camera pose a calibration file gives, checked against the scene's arm layout."""
    calib = (twin_calibration(calibration_path, scene_name, arm_spacing_m) if table_top_z_m is None
             else twin_calibration(calibration_path, scene_name, arm_spacing_m, table_top_z_m))
    return {s: Pose.from_matrix(calib.arms[s].T_world_base) for s in ARM_SIDES}, calib.T_world_cam
