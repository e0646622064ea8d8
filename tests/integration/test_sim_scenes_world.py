"""Registered scenes through sim-core's SimWorld: objects rest on the world's table and the head camera's
segmentation names them."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import sapien

from mallvi.sim_bridge.world import SimWorld


@pytest.fixture(scope="session")
def live_renderer() -> Iterator[sapien.Scene]:
    """A tiny scene with a camera kept alive for the whole session: SAPIEN tears its render context down when the
    last such scene dies and re-creating it costs seconds on a CPU renderer, so later render tests reuse it."""
    scene = sapien.Scene()
    cam = scene.add_camera("keep_alive", 8, 8, 1.0, 0.01, 10.0)
    scene.update_render()
    cam.take_picture()
    yield scene


@pytest.mark.usefixtures("live_renderer")
def test_scene_in_simworld_settles_and_is_seen_by_the_head_camera() -> None:
    with SimWorld.create("grounding_dense", 100003, cameras=("head",)) as world:
        assert set(world.objects) == {"red_block", "yellow_block", "blue_block", "green_block", "black_block"}
        start = {n: o.pose.p.copy() for n, o in world.objects.items()}
        world.settle(max_s=1.0)
        for name, obj in world.objects.items():
            assert np.linalg.norm(obj.pose.p - start[name]) < 0.005, f"{name} moved while settling"
            assert abs(obj.pose.p[2] - world.table_top_z) < 0.003, f"{name} is not on the world's table"
        obs = world.observe("head")
        assert obs.seg is not None
        visible = {obs.seg_names[int(i)] for i in np.unique(obs.seg) if int(i) in obs.seg_names}
        assert visible == set(world.objects), f"head camera sees {visible}"
        info = world.truth.get_object("red_block")
        assert np.allclose(info.points["fp1"].p - info.points["fp0"].p, [0, 0, 0.05], atol=1e-3)


def test_simworld_scene_is_a_function_of_the_seed() -> None:
    def poses(seed: int) -> dict[str, list[float]]:
        with SimWorld.create("blocks_free", seed, render=False) as world:
            return {n: o.pose.p.tolist() for n, o in world.objects.items()}

    assert poses(100007) == poses(100007)
    assert poses(100007) != poses(100008)
