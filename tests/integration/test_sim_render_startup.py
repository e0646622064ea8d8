"""The renderer's start-up: a world's cameras skip SAPIEN's BRDF lookup table, and no pixel changes for it."""

from __future__ import annotations

import numpy as np
import pytest

from mallvi.bench.tasks import get_task
from mallvi.sim_bridge import cameras
from mallvi.sim_bridge.world import SimWorld

CAMERAS = ("head", "front", "left_wrist", "right_wrist")


def _pictures(seed: int) -> dict[str, np.ndarray]:
    spec = get_task("blocks_ranking_rgb").scene_spec("original")  # textured table and blocks, the bench's lights
    with SimWorld.create(spec, seed, wrist_cameras=True) as world:
        out = {}
        for name in CAMERAS:
            obs = world.observe(name)
            assert obs.seg is not None
            out.update({f"{name}/rgb": obs.rgb, f"{name}/depth": obs.depth_m, f"{name}/seg": obs.seg})
        return out


def test_pictures_with_the_stand_in_table_equal_sapiens_own(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _pictures(100001)
    with monkeypatch.context() as m:
        m.setattr(cameras, "skip_brdf_lut", lambda scene, cam: None)  # SAPIEN computes its 512×512 table
        reference = _pictures(100001)
    assert fast.keys() == reference.keys()
    for key, want in reference.items():
        assert np.array_equal(fast[key], want), key
    assert len(np.unique(fast["head/rgb"].reshape(-1, 3), axis=0)) > 100  # a real picture, not a blank one
