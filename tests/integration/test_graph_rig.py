"""The graph on the real-rig code path: two emulated Pipers on python-can virtual buses and a synthetic RealSense
showing a red cube; objects resolve through perception (there is no simulator truth on a rig)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mallvi.config import RunConfig
from mallvi.orchestration.run_instruction import run
from mallvi.orchestration.stations import RigAccess, RunRequest
from mallvi.robot_drivers.calibration.calibration_files import (
    ArmCalibration,
    RigCalibration,
    mount_matrix,
    save_rig_calibration,
)
from mallvi.robot_drivers.calibration.eye_to_hand import BoardSpec
from mallvi.robot_drivers.piper.piper_emulator import PiperEmulator
from mallvi.robot_drivers.realsense.config_realsense import RealSenseConfig
from mallvi.robot_drivers.realsense.realsense_synthetic import SyntheticRealSense
from mallvi.robot_drivers.rig_skills.rig_skills import RigSkillsConfig
from tests.fixtures.realsense_stream import streaming

W, H = 320, 240
K = np.array([[260.0, 0, 160.0], [0, 260.0, 120.0], [0, 0, 1]])
T_WORLD_CAM = np.array([[1.0, 0, 0, 0.0], [0, -1.0, 0, 0.0], [0, 0, -1.0, 1.55], [0, 0, 0, 1]])  # looking down
TABLE_Z, CUBE_XY, CUBE_M = 0.75, (-0.2, 0.0), 0.04


def _frame() -> tuple[np.ndarray, np.ndarray]:
    """A grey table 0.80 m below the camera with a red 4 cm cube on it."""
    rgb = np.full((H, W, 3), 150, np.uint8)
    depth = np.full((H, W), 1.55 - TABLE_Z)
    z_top = 1.55 - (TABLE_Z + CUBE_M)
    u0, u1 = (160 + 260 * (CUBE_XY[0] + s * CUBE_M / 2) / z_top for s in (-1, 1))
    v0, v1 = (120 - 260 * (CUBE_XY[1] + s * CUBE_M / 2) / z_top for s in (1, -1))
    rgb[round(v0):round(v1), round(u0):round(u1)] = (200, 30, 30)
    depth[round(v0):round(v1), round(u0):round(u1)] = z_top
    return rgb, depth


@pytest.fixture
def camera_feed() -> Iterator[SyntheticRealSense]:
    yield from streaming(W, H, K, *_frame())


def _calibration(path: Path) -> Path:
    arms = {side: ArmCalibration(mount_matrix(x, -0.30, 0.95, 90.0), np.eye(4), np.eye(4), 10, 0.5, 1.0, 0.1, 0.2)
            for side, x in (("left", -0.30), ("right", 0.30))}
    return save_rig_calibration(path, RigCalibration(T_WORLD_CAM, K, np.zeros(5), W, H, arms, BoardSpec()))


def test_the_graph_drives_the_emulated_rig(tmp_path: Path, camera_feed: SyntheticRealSense) -> None:
    tag = uuid.uuid4().hex[:6]
    emus = [PiperEmulator(f"gr_{s}_{tag}", object_width_m=0.03).start() for s in ("left", "right")]
    try:
        request = RunRequest(instruction="pick up the red block", calibration=_calibration(tmp_path / "rig.yaml"),
                             trace_dir=tmp_path / "trace")
        overrides = {"can_left": f"gr_left_{tag}", "can_right": f"gr_right_{tag}", "bus_type": "virtual",
                     "camera": RealSenseConfig(timeout_s=2.0), "use_depth_cloud": False,
                     "skills": RigSkillsConfig(ee_speed_m_s=0.4, step_m=0.02)}
        result = run(request, RunConfig(robot="piper", camera="realsense", reflector=False),
                     rig=RigAccess(overrides=overrides, camera_source=camera_feed.syncer))
        sent = {s: e.command_count() for s, e in zip(("left", "right"), emus, strict=True)}
    finally:
        for e in emus:
            e.close()
    assert result.status == "succeeded", (result.failure_report, result.refusal)
    assert result.success_source.startswith("graph belief")
    assert sent["left"] > 0  # the cube is on the left: the left Piper was commanded over CAN
    assert result.subtasks == ["pick up the red block"]


def test_a_missing_calibration_is_bad_input(tmp_path: Path) -> None:
    from mallvi.config import ConfigError

    with pytest.raises(ConfigError, match="not found"):
        run(RunRequest(instruction="pick up the red block", calibration=tmp_path / "none.yaml"),
            RunConfig(robot="piper", camera="realsense"))
