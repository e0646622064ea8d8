"""The RealSense camera on synthetic frames through pyrealsense2 (software_device + syncer + align) and recordings."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from mallvi.contracts.errors import StaleFrameError
from mallvi.robot_drivers.realsense.config_realsense import RealSenseConfig
from mallvi.robot_drivers.realsense.realsense import RealSenseCamera
from mallvi.robot_drivers.realsense.realsense_synthetic import SyntheticRealSense

W, H = 160, 120
K_COLOR = np.array([[120.0, 0, 80.0], [0, 120.0, 60.0], [0, 0, 1]])
K_DEPTH = np.array([[100.0, 0, 80.0], [0, 100.0, 60.0], [0, 0, 1]])
BASELINE = np.array([-0.05, 0.0, 0.0])  # depth-camera origin seen from the colour camera, metres
T_COLOR_DEPTH = np.eye(4)
T_COLOR_DEPTH[:3, 3] = BASELINE
# Colour camera 1.2 m above the table looking straight down (OpenCV frame: z forward = world -z).
T_WORLD_CAM = np.array([[1.0, 0, 0, 0.1], [0, -1.0, 0, 0.2], [0, 0, -1.0, 1.2], [0, 0, 0, 1]])
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "realsense" / "box_on_plane.db3"


def render_scene() -> tuple[np.ndarray, np.ndarray]:
    """Colour and depth (from the depth camera) of a 10 cm square at 0.8 m in front of a plane at 1.0 m."""
    v, u = np.mgrid[0:H, 0:W].astype(float)
    rays = np.stack([(u - K_DEPTH[0, 2]) / K_DEPTH[0, 0], (v - K_DEPTH[1, 2]) / K_DEPTH[1, 1], np.ones_like(u)], -1)
    on_square = rays * 0.8 + BASELINE  # the square's plane, in colour-camera coordinates
    inside = (np.abs(on_square[..., 0]) < 0.05) & (np.abs(on_square[..., 1]) < 0.05)
    depth_m = np.where(inside, 0.8, 1.0)
    rgb = np.zeros((H, W, 3), np.uint8)
    rgb[..., 1] = 90
    uc = np.abs((np.mgrid[0:H, 0:W][1] - K_COLOR[0, 2]) / K_COLOR[0, 0] * 0.8) < 0.05
    vc = np.abs((np.mgrid[0:H, 0:W][0] - K_COLOR[1, 2]) / K_COLOR[1, 1] * 0.8) < 0.05
    rgb[uc & vc] = (220, 30, 30)
    return rgb, depth_m


def back_project(obs_depth: np.ndarray, u: int, v: int) -> np.ndarray:
    z = float(obs_depth[v, u])
    p_cam = np.array([(u - K_COLOR[0, 2]) / K_COLOR[0, 0] * z, (v - K_COLOR[1, 2]) / K_COLOR[1, 1] * z, z, 1.0])
    return (T_WORLD_CAM @ p_cam)[:3]


def _device(record_to: str | None = None) -> SyntheticRealSense:
    return SyntheticRealSense(W, H, K_COLOR, K_DEPTH, T_COLOR_DEPTH, record_to=record_to)


def _camera(dev: SyntheticRealSense | None, **kw: object) -> RealSenseCamera:
    cam = RealSenseCamera(RealSenseConfig(timeout_s=0.5, **kw), T_WORLD_CAM,  # type: ignore[arg-type]
                          source=dev.syncer if dev else None)
    cam.start()
    return cam


def _check_scene(obs_depth: np.ndarray) -> None:
    # The square's centre pixel back-projects to the square's centre: 0.8 m below the camera.
    assert back_project(obs_depth, 80, 60) == pytest.approx([0.1, 0.2, 0.4], abs=0.005)
    # Aligned to colour: the square spans u = 80 ± 7.5 px in the colour image (raw depth has it shifted 6 px).
    assert obs_depth[60, 74] == pytest.approx(0.8, abs=0.005)
    assert obs_depth[60, 86] == pytest.approx(0.8, abs=0.005)
    assert obs_depth[60, 95] == pytest.approx(1.0, abs=0.005)


def test_synthetic_frames_give_an_aligned_observation() -> None:
    dev = _device()
    cam = _camera(dev)
    rgb, depth = render_scene()
    dev.push(rgb, depth, frame_number=1, timestamp_ms=33.0)
    obs = cam.read()
    dev.close()
    assert obs.rgb.shape == (H, W, 3) and obs.depth_m.dtype == np.float32
    assert np.array_equal(obs.rgb, rgb)
    assert np.allclose(obs.K, K_COLOR)
    assert np.allclose(obs.T_world_cam, T_WORLD_CAM)
    assert obs.camera == "realsense"
    _check_scene(obs.depth_m)


def test_missing_frames_raise_stale_frame_error() -> None:
    dev = _device()
    cam = _camera(dev)
    t0 = time.monotonic()
    with pytest.raises(StaleFrameError, match=r"no depth\+colour frame pair within 0.5 s"):
        cam.read()
    assert time.monotonic() - t0 < 2.0
    dev.close()


def test_frame_number_that_does_not_advance_is_stale() -> None:
    dev = _device()
    cam = _camera(dev)
    rgb, depth = render_scene()
    dev.push(rgb, depth, frame_number=7, timestamp_ms=33.0)
    cam.read()
    dev.push(rgb, depth, frame_number=7, timestamp_ms=99.0)
    with pytest.raises(StaleFrameError, match="does not advance"):
        cam.read()
    dev.close()


def test_old_frames_in_host_time_are_stale() -> None:
    dev = _device()
    cam = _camera(dev)
    rgb, depth = render_scene()
    dev.push(rgb, depth, frame_number=1, timestamp_ms=(time.time() - 3.0) * 1000.0, host_clock=True)
    with pytest.raises(StaleFrameError, match="s old"):
        cam.read()
    now_ms = time.time() * 1000.0
    for n in (2, 3):  # the stream recovers; the syncer re-pairs after the 3 s gap
        dev.push(rgb, depth, frame_number=n, timestamp_ms=now_ms + 33.0 * (n - 2), host_clock=True)
    assert cam.read().depth_m[60, 80] == pytest.approx(0.8, abs=0.005)
    dev.close()


def test_recording_plays_back_through_the_camera(tmp_path: Path) -> None:
    path = tmp_path / "scene.db3"
    dev = _device(record_to=str(path))
    sink = _camera(dev)
    rgb, depth = render_scene()
    for n in range(1, 4):
        dev.push(rgb, depth, frame_number=n, timestamp_ms=33.0 * n)
        sink.read()
    dev.close()
    del dev, sink
    with _camera(None, recording_path=str(path)) as cam:
        depths = [cam.read().depth_m for _ in range(3)]
        with pytest.raises(StaleFrameError):
            cam.read()  # end of the recording
    for d in depths:
        _check_scene(d)


def test_shipped_recording_plays_back() -> None:
    with _camera(None, recording_path=str(FIXTURE)) as cam:
        obs = cam.read()
    _check_scene(obs.depth_m)
    assert tuple(obs.rgb[60, 80]) == (220, 30, 30)


def test_missing_recording_is_a_clear_config_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        RealSenseConfig(recording_path=str(tmp_path / "nope.db3"))
