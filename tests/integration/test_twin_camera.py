"""The twin's RealSense: SAPIEN renders through a pyrealsense2 software device, read by RealSenseCamera."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from mallvi.contracts.observation import Observation
from mallvi.perception.pipeline import make_perception
from mallvi.robot_drivers.realsense.config_realsense import RealSenseConfig
from mallvi.robot_drivers.realsense.realsense import RealSenseCamera
from mallvi.sim_bridge.world import SimWorld
from mallvi.twin.camera import TwinRealSenseSource


@pytest.fixture(scope="module")
def seen() -> Iterator[tuple[SimWorld, TwinRealSenseSource, Observation, Observation]]:
    world = SimWorld.create("blocks_free", 3, cameras=())
    source = TwinRealSenseSource(world)
    camera = RealSenseCamera(RealSenseConfig(name="realsense"), source.T_world_color, source=source)
    camera.start()
    first, second = camera.read(), camera.read()
    yield world, source, first, second
    camera.stop()
    source.close()
    world.close()


def test_every_read_is_a_fresh_aligned_frame_with_millimetre_depth(
        seen: tuple[SimWorld, TwinRealSenseSource, Observation, Observation]) -> None:
    _, source, first, second = seen
    assert first.rgb.shape == (480, 640, 3) and first.depth_m.shape == (480, 640)
    np.testing.assert_allclose(first.K, source.K_color)  # depth was aligned to the colour imager
    valid = first.depth_m[first.depth_m > 0].astype(np.float64)
    assert 0.8 < valid.size / first.depth_m.size < 0.995  # holes, but mostly depth
    assert np.allclose(valid * 1000.0, np.round(valid * 1000.0), atol=1e-3)  # z16 in 1 mm units
    assert not np.array_equal(first.depth_m, second.depth_m)  # a new noisy frame each read


def test_blocks_seen_through_the_software_realsense_localise_within_a_few_mm(
        seen: tuple[SimWorld, TwinRealSenseSource, Observation, Observation]) -> None:
    world, _, first, _ = seen
    graph = make_perception("color").describe(first)
    found = {o.color: np.asarray(o.position_world) for o in graph.objects}
    for name, obj in world.objects.items():
        info = obj.info()
        truth = np.asarray(info.points["center"].position_m)
        assert info.color in found, f"{name} was not detected"
        assert np.linalg.norm(found[info.color][:2] - truth[:2]) < 0.008, name
