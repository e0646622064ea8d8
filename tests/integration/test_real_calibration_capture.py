"""`mallvi calibrate` capture mode, rehearsed: an emulated Piper on a virtual CAN bus and a recorded camera stream.

The operator's Enter presses are scripted: each one moves the emulated arm to the next joint configuration, and
the recording holds what the camera sees of the board at that configuration.
"""

from __future__ import annotations

import builtins
import json
import math
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
from piper_sdk.kinematics.piper_fk import C_PiperForwardKinematics
from scipy.spatial.transform import Rotation

from mallvi.cli import main
from mallvi.robot_drivers.calibration.calibration_files import load_rig_calibration, mount_matrix
from mallvi.robot_drivers.calibration.eye_to_hand import BoardSpec, render_board_view
from mallvi.robot_drivers.piper.piper_emulator import PiperEmulator
from mallvi.robot_drivers.realsense.realsense_synthetic import SyntheticRealSense

W, H = 960, 540
K = np.array([[700.0, 0, (W - 1) / 2], [0, 700.0, (H - 1) / 2], [0, 0, 1]])
BOARD = BoardSpec()
JOINTS_DEG = [(0, 80, -30, 0, 40, 0), (10, 75, -25, 15, 35, 10), (-12, 85, -35, -15, 45, -15),
              (5, 70, -20, 20, 30, 25), (-8, 90, -40, -20, 50, -20), (15, 80, -30, 10, 25, -10),
              (-15, 78, -28, 25, 42, 15)]


def _T_base_flange(joints_deg: tuple[float, ...]) -> np.ndarray:
    x, y, z, rx, ry, rz = C_PiperForwardKinematics(0x01).CalFK([math.radians(v) for v in joints_deg])[5]
    T = np.eye(4)
    T[:3, :3] = Rotation.from_euler("xyz", [rx, ry, rz], degrees=True).as_matrix()
    T[:3, 3] = np.array([x, y, z]) / 1000.0
    return T


def test_capture_session_with_emulated_arm_and_recorded_camera(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    T_flange_board = np.eye(4)
    T_flange_board[:3, 3] = [-BOARD.size_m[0] / 2, -BOARD.size_m[1] / 2, 0.02]  # board centred on the flange
    T_nominal_board = _T_base_flange(JOINTS_DEG[0]) @ T_flange_board
    centre = T_nominal_board[:3, 3] + T_nominal_board[:3, :3] @ [BOARD.size_m[0] / 2, BOARD.size_m[1] / 2, 0]
    # the camera 0.6 m in front of the board's printed side, looking at it
    T_base_cam = np.eye(4)
    T_base_cam[:3, :3] = T_nominal_board[:3, :3]
    T_base_cam[:3, 3] = centre - 0.6 * T_nominal_board[:3, 2]

    recording = tmp_path / "session.db3"
    dev = SyntheticRealSense(W, H, K, K, record_to=str(recording))
    depth = np.zeros((H, W))
    views = [JOINTS_DEG[0], *JOINTS_DEG]  # the first frame is read when the session starts
    for n, joints in enumerate(views, start=1):
        T_cam_board = np.linalg.inv(T_base_cam) @ _T_base_flange(joints) @ T_flange_board
        dev.push(render_board_view(BOARD, T_cam_board, K, W, H), depth, frame_number=n, timestamp_ms=33.0 * n)
        dev.syncer.try_wait_for_frames(1000)
    dev.close()
    del dev

    channel = f"calib_{uuid.uuid4().hex[:6]}"
    answers = iter(range(len(JOINTS_DEG)))
    with PiperEmulator(channel) as emu:

        def operator(prompt: str) -> str:
            i = next(answers, None)
            if i is None:
                return "q"
            emu.set_joints_deg(list(JOINTS_DEG[i]))
            time.sleep(0.15)  # let the new feedback arrive
            return ""

        monkeypatch.setattr(builtins, "input", operator)
        out = tmp_path / "rig.yaml"
        code = main(["calibrate", "--out", str(out), "--save-views", str(tmp_path / "views"), "--arms", "left",
                     "--can-left", channel, "--bus-type", "virtual", "--camera-recording", str(recording),
                     "--anchor-mount=-0.30,-0.30,0.95,90", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.err.count("captured:") == len(JOINTS_DEG)
    report = json.loads(captured.out)
    assert report["arms"]["left"]["views"] == len(JOINTS_DEG)
    calib = load_rig_calibration(out)
    expected = mount_matrix(-0.30, -0.30, 0.95, 90.0) @ T_base_cam
    d = np.linalg.inv(expected) @ calib.T_world_cam
    assert 1000 * np.linalg.norm(d[:3, 3]) < 2.0
    assert np.degrees(np.linalg.norm(Rotation.from_matrix(d[:3, :3]).as_rotvec())) < 0.5
    assert (tmp_path / "views" / "views.yaml").is_file()
