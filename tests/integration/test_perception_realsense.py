"""Perception on frames that went through librealsense: a software RealSense with a depth sensor offset from the
colour sensor, z16 depth in millimetres, and the driver's depth-to-colour alignment."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyrealsense2")

from mallvi.perception.pipeline import make_perception
from mallvi.perception.synthetic import intrinsics, look_at, random_blocks, render
from mallvi.robot_drivers.realsense.config_realsense import RealSenseConfig
from mallvi.robot_drivers.realsense.realsense import RealSenseCamera
from mallvi.robot_drivers.realsense.realsense_synthetic import SyntheticRealSense

W, H = 424, 240
K_COLOR = intrinsics(W, H, 42.0)
K_DEPTH = intrinsics(W, H, 58.0)  # a wider depth imager, as on D400 cameras
T_COLOR_DEPTH = np.eye(4)
T_COLOR_DEPTH[:3, 3] = (-0.015, 0.0, 0.0)  # depth origin 15 mm to the colour camera's left
T_WORLD_COLOR = look_at((0.10, -0.50, 1.20), (-0.15, 0.75, -0.70))


@pytest.mark.parametrize("seed", [21, 22])
def test_blocks_are_found_and_localised_through_the_realsense_path(seed: int) -> None:
    boxes = random_blocks(np.random.default_rng(seed), ("red", "green", "blue"), table_z=0.73, min_gap_m=0.11)
    rgb = render(boxes, K_COLOR, T_WORLD_COLOR, W, H, table_z=0.73, with_seg=False).rgb
    depth_m = render(boxes, K_DEPTH, T_WORLD_COLOR @ T_COLOR_DEPTH, W, H, table_z=0.73, with_seg=False).depth_m

    dev = SyntheticRealSense(W, H, K_COLOR, K_DEPTH, T_COLOR_DEPTH)
    cam = RealSenseCamera(RealSenseConfig(timeout_s=1.0), T_WORLD_COLOR, source=dev.syncer)
    cam.start()
    try:
        dev.push(rgb, depth_m, frame_number=1, timestamp_ms=33.0)
        obs = cam.read()
    finally:
        dev.close()
    assert obs.seg is None and obs.camera == "realsense"

    graph = make_perception("color").describe(obs)
    assert sorted(o.id for o in graph.objects) == sorted(b.name for b in boxes)
    for box in boxes:
        err = np.linalg.norm(np.asarray(graph.get(box.name).position_world) - box.center_world)
        assert err < 0.008, f"{box.name}: {err * 1000:.1f} mm"
