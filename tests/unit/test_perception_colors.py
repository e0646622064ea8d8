"""Colour words on tinted frames: a cyan distractor is neither the green block nor the blue pad."""

from __future__ import annotations

import numpy as np
import pytest

from mallvi.contracts.observation import Observation
from mallvi.perception.detectors import make_detector
from mallvi.perception.synthetic import SynthBox, head_camera, render
from mallvi.perception.types import Detection

K, T_WORLD_CAM = head_camera()
TABLE_Z = 0.74
SCENE = [
    SynthBox("green_block", (-0.12, 0.0, TABLE_Z + 0.025), (0.05, 0.05, 0.05), "green"),
    SynthBox("blue_pad", (0.12, -0.02, TABLE_Z + 0.005), (0.10, 0.10, 0.01), "blue"),
    SynthBox("cyan_eraser", (0.02, 0.18, TABLE_Z + 0.007), (0.05, 0.022, 0.014), "cyan", yaw_rad=0.4),
    SynthBox("cyan_toy", (0.25, 0.15, TABLE_Z + 0.02), (0.04, 0.04, 0.04), "cyan"),
]


def _tinted(obs: Observation, rgb_gain: tuple[float, float, float]) -> Observation:
    """The frame under a coloured light: each channel scaled (the benchmark draws its light colours at random)."""
    rgb = np.clip(obs.rgb.astype(np.float32) * np.asarray(rgb_gain, dtype=np.float32), 0, 255).astype(np.uint8)
    return Observation(rgb=rgb, depth_m=obs.depth_m, K=obs.K, T_world_cam=obs.T_world_cam, camera=obs.camera,
                       stamp=obs.stamp, seg=None, seg_names={})  # fmt: skip


def _names(clean: Observation, dets: list[Detection]) -> list[str]:
    """The simulator name under each detection's box (the object covering most of it)."""
    assert clean.seg is not None
    out = []
    for d in dets:
        x0, y0, x1, y1 = (int(c) for c in d.box_xyxy)
        ids, counts = np.unique(clean.seg[y0:y1, x0:x1], return_counts=True)
        keep = ids != 0
        out.append(clean.seg_names[int(ids[keep][np.argmax(counts[keep])])] if keep.any() else "table")
    return out


@pytest.mark.parametrize("gain", [(1.0, 1.0, 1.0), (0.75, 1.0, 0.85), (0.85, 0.95, 1.0)])
def test_the_green_block_and_the_blue_pad_are_one_each_beside_cyan_things(gain: tuple[float, float, float]) -> None:
    clean = render(SCENE, K, T_WORLD_CAM, 640, 360, table_z=TABLE_Z)
    obs = _tinted(clean, gain)
    detector = make_detector("color")
    assert _names(clean, detector.detect(obs, ["green block"])) == ["green_block"]
    assert _names(clean, detector.detect(obs, ["blue pad"])) == ["blue_pad"]
    assert sorted(_names(clean, detector.detect(obs, ["cyan"]))) == ["cyan_eraser", "cyan_toy"]
