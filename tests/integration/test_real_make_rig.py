"""make_real_rig: calibration YAML + two emulated Pipers + a synthetic RealSense -> guarded skills that move."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mallvi.contracts.errors import UnknownObjectError
from mallvi.contracts.geometry import Pose
from mallvi.contracts.world_model import ObjectInfo
from mallvi.robot_drivers.calibration.calibration_files import (
    ArmCalibration,
    CalibrationFileError,
    RigCalibration,
    mount_matrix,
    save_rig_calibration,
)
from mallvi.robot_drivers.calibration.eye_to_hand import BoardSpec
from mallvi.robot_drivers.piper.piper import PiperArm
from mallvi.robot_drivers.piper.piper_emulator import PiperEmulator
from mallvi.robot_drivers.realsense.config_realsense import RealSenseConfig
from mallvi.robot_drivers.realsense.realsense_synthetic import SyntheticRealSense
from mallvi.robot_drivers.rig.config_rig import RigConfig
from mallvi.robot_drivers.rig.rig import depth_to_world_points, make_real_rig
from mallvi.robot_drivers.rig_skills.rig_skills import RigSkillsConfig
from tests.fixtures.realsense_stream import streaming

W, H = 96, 72
K = np.array([[80.0, 0, 48.0], [0, 80.0, 36.0], [0, 0, 1]])
T_WORLD_CAM = np.array([[1.0, 0, 0, 0.0], [0, -1.0, 0, 0.0], [0, 0, -1.0, 1.55], [0, 0, 0, 1]])  # looking down
CUBE = ObjectInfo("red_cube", "cube", Pose((-0.2, 0.0, 0.77)), (0.04, 0.04, 0.04), "red")


class OneCube:
    def object_names(self) -> list[str]:
        return ["red_cube"]

    def get_object(self, name: str) -> ObjectInfo:
        if name != "red_cube":
            raise UnknownObjectError(f"no object called {name!r}")
        return CUBE


def _calibration(path: Path) -> Path:
    arms = {side: ArmCalibration(mount_matrix(x, -0.30, 0.95, 90.0), np.eye(4), np.eye(4), 10, 0.5, 1.0, 0.1, 0.2)
            for side, x in (("left", -0.30), ("right", 0.30))}
    return save_rig_calibration(path, RigCalibration(T_WORLD_CAM, K, np.zeros(5), W, H, arms, BoardSpec()))


@pytest.fixture
def camera_feed() -> Iterator[SyntheticRealSense]:
    """A synthetic RealSense streaming a table plane 0.8 m below the camera (z = 0.75 m) at ~30 Hz."""
    yield from streaming(W, H, K, np.full((H, W, 3), 120, np.uint8), np.full((H, W), 0.80))


def test_make_real_rig_builds_a_rig_that_grasps(tmp_path: Path, camera_feed: SyntheticRealSense) -> None:
    tag = uuid.uuid4().hex[:6]
    emus = [PiperEmulator(f"mk_{s}_{tag}", object_width_m=0.03).start() for s in ("left", "right")]
    try:
        cfg = RigConfig(str(_calibration(tmp_path / "rig.yaml")), can_left=f"mk_left_{tag}",
                        can_right=f"mk_right_{tag}", bus_type="virtual", camera=RealSenseConfig(timeout_s=2.0),
                        skills=RigSkillsConfig(ee_speed_m_s=0.4, step_m=0.02))
        dual, camera, skills = make_real_rig(cfg, OneCube(), camera_source=camera_feed.syncer)
        try:
            assert isinstance(dual.left, PiperArm) and dual.left.config.base_pose_world.p == pytest.approx(
                [-0.30, -0.30, 0.95])
            obs = camera.read()
            assert np.allclose(obs.T_world_cam, T_WORLD_CAM)
            table = depth_to_world_points(obs)
            assert table[:, 2] == pytest.approx(0.75, abs=1e-3)  # the depth cloud lands on the table plane
            result = skills.grasp_actor("red_cube", "left")
            assert result.ok, result.message
            assert dual.left.ee_pose().p == pytest.approx([-0.2, 0.0, 0.97], abs=0.004)
        finally:
            for arm in (dual.left, dual.right):
                arm.disconnect()
            camera.stop()  # type: ignore[attr-defined]
    finally:
        for e in emus:
            e.close()


def test_missing_or_one_armed_calibration_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CalibrationFileError, match="not found"):
        make_real_rig(RigConfig(str(tmp_path / "none.yaml")), OneCube())
    arms = {"left": ArmCalibration(np.eye(4), np.eye(4), np.eye(4), 5, 0.1, 0.1, 0.1, 0.1)}
    path = save_rig_calibration(tmp_path / "one.yaml", RigCalibration(T_WORLD_CAM, K, np.zeros(5), W, H, arms))
    with pytest.raises(ValueError, match="no mount for the right arm"):
        make_real_rig(RigConfig(str(path)), OneCube())
    with pytest.raises(ValueError, match="different CAN channels"):
        RigConfig(str(path), can_left="can0", can_right="can0")
