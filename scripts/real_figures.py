"""Figures for the real-rig code, measured without hardware.

1. Calibration: camera-pose error of the eye-to-hand solve vs number of views, from rendered ChArUco views,
   with and without noise on the robot poses (0.5 mm / 0.1° per view, about a Piper's repeatability).
2. Camera: RealSense read() time (syncer + align + conversion) at 640x480 on synthetic frames.
3. Guard: time to check a 30-waypoint gripper path against a 20 000-point depth cloud.

Run: .venv/bin/python scripts/real_figures.py   (about a minute on 2 cores)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mallvi.contracts.geometry import Pose
from mallvi.robot_drivers.calibration.eye_to_hand import BoardSpec, detect_board, render_board_view, solve_eye_to_hand
from mallvi.robot_drivers.realsense.config_realsense import RealSenseConfig
from mallvi.robot_drivers.realsense.realsense import RealSenseCamera
from mallvi.robot_drivers.realsense.realsense_synthetic import SyntheticRealSense
from mallvi.robot_drivers.safety.guard import SafetyConfig, SafetyGuard


def _T(rotvec: list[float], t: list[float]) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = Rotation.from_rotvec(rotvec).as_matrix()
    T[:3, 3] = t
    return T


def calibration_figure() -> None:
    spec, W, H = BoardSpec(), 1280, 720
    K = np.array([[900.0, 0, (W - 1) / 2], [0, 900.0, (H - 1) / 2], [0, 0, 1]])
    T_base_cam = _T([2.2, 0.3, -0.2], [0.5, 0.1, 0.6])
    T_flange_board = _T([0, 0, 0.3], [-0.1, -0.14, 0.05])
    rows = []
    for n_views in (5, 8, 12, 20):
        for noise in (False, True):
            errs = []
            for seed in range(3):
                rng = np.random.default_rng(seed)
                Tf, Tc = [], []
                while len(Tc) < n_views:
                    rot = Rotation.from_rotvec(rng.uniform(-0.5, 0.5, 3) * np.array([1, 1, 0.6]))
                    centre = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08), rng.uniform(0.55, 0.8)])
                    Tcb = np.eye(4)
                    Tcb[:3, :3] = rot.as_matrix()
                    Tcb[:3, 3] = centre - rot.apply([spec.size_m[0] / 2, spec.size_m[1] / 2, 0])
                    det = detect_board(render_board_view(spec, Tcb, K, W, H), spec, K)
                    if det is None:
                        continue
                    T_robot = T_base_cam @ Tcb @ np.linalg.inv(T_flange_board)
                    if noise:
                        T_robot = T_robot @ _T(list(rng.normal(0, np.radians(0.1), 3)), list(rng.normal(0, 0.0005, 3)))
                    Tf.append(T_robot)
                    Tc.append(det.T_cam_board)
                res = solve_eye_to_hand(Tf, Tc)
                d = np.linalg.inv(T_base_cam) @ res.T_base_cam
                errs.append((1000 * np.linalg.norm(d[:3, 3]), np.degrees(np.linalg.norm(
                    Rotation.from_matrix(d[:3, :3]).as_rotvec())), res.residual_mm_mean))
            e = np.array(errs)
            rows.append((n_views, noise, e[:, 0].mean(), e[:, 0].max(), e[:, 1].mean(), e[:, 2].mean()))
    print("| views | robot-pose noise | camera error mm (mean / max of 3) | camera error deg | residual mm |")
    print("| --- | --- | --- | --- | --- |")
    for n, noise, mm, mm_max, deg, res in rows:
        print(f"| {n} | {'0.5 mm, 0.1°' if noise else 'none'} | {mm:.2f} / {mm_max:.2f} | {deg:.3f} | {res:.2f} |")


def camera_figure() -> None:
    W, H = 640, 480
    K = np.array([[600.0, 0, 320.0], [0, 600.0, 240.0], [0, 0, 1]])
    dev = SyntheticRealSense(W, H, K, K)
    cam = RealSenseCamera(RealSenseConfig(), np.eye(4), source=dev.syncer)
    cam.start()
    rgb = np.zeros((H, W, 3), np.uint8)
    depth = np.full((H, W), 1.0)
    times = []
    for n in range(1, 41):
        dev.push(rgb, depth, frame_number=n, timestamp_ms=33.0 * n)
        t0 = time.perf_counter()
        cam.read()
        times.append(time.perf_counter() - t0)
    dev.close()
    t = 1000 * np.array(times[5:])
    print(f"\nRealSense read() at {W}x{H} (syncer + align + conversion, same depth/colour intrinsics): "
          f"median {np.median(t):.1f} ms, "
          f"p90 {np.percentile(t, 90):.1f} ms")


def guard_figure() -> None:
    guard = SafetyGuard(SafetyConfig(table_top_z_m=0.75))
    rng = np.random.default_rng(0)
    n = 20000
    cloud = np.column_stack([rng.uniform(-0.6, 0.6, n), rng.uniform(-0.4, 0.4, n), rng.uniform(0.75, 0.8, n)])
    down = (0.7071068, 0.0, 0.7071068, 0.0)
    path = [Pose.from_arrays([-0.3 + 0.01 * i, 0.0, 1.1], down) for i in range(30)]
    t0 = time.perf_counter()
    for _ in range(20):
        guard.check_path_against_cloud("left", path, cloud)
    dt = (time.perf_counter() - t0) / 20
    print(f"\nGuard: 30-waypoint gripper path vs 20 000 cloud points: {1000 * dt:.1f} ms per check")


if __name__ == "__main__":
    calibration_figure()
    camera_figure()
    guard_figure()
