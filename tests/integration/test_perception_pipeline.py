"""The whole perception pipeline (detect -> fuse -> segment -> grasp -> project -> scene graph)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mallvi.contracts.observation import Observation
from mallvi.perception.pipeline import make_perception
from mallvi.perception.synthetic import SynthBox, degrade, intrinsics, look_at, random_blocks, render
from mallvi.perception.types import LocalizationError


def _realsense_style(seed: int) -> tuple[list[SynthBox], Observation]:
    """A different camera (own K, oblique extrinsics, 848x480), exposure change, depth noise and holes, no seg."""
    rng = np.random.default_rng(seed)
    boxes = random_blocks(rng, ("red", "green", "blue", "yellow"), min_gap_m=0.1)
    K = intrinsics(848, 480, 42.0)
    K[0, 2] += 6.0
    T_world_cam = look_at((0.35, -0.55, 1.25), (-0.45, 0.75, -0.65))
    clean = render(boxes, K, T_world_cam, 848, 480, table_z=0.72)
    return boxes, degrade(clean, rng, gain=0.75, depth_noise_m=0.0015, hole_fraction=0.05)


@pytest.mark.parametrize("seed", [11, 12])
def test_color_pipeline_on_a_real_camera_style_frame(seed: int) -> None:
    boxes, obs = _realsense_style(seed)
    assert obs.seg is None
    perception = make_perception("color")
    graph = perception.describe(obs)
    assert sorted(o.id for o in graph.objects) == sorted(b.name for b in boxes)
    for box in boxes:
        obj = graph.get(box.name)
        err = np.linalg.norm(np.asarray(obj.position_world) - box.center_world)
        assert err < 0.008, f"{box.name}: {err * 1000:.1f} mm"
        assert obj.extent_m[2] == pytest.approx(box.size_m[2], abs=0.008)
    # the scene graph's left/right agrees with the true x order
    xs = sorted(boxes, key=lambda b: b.center_world[0])
    assert "left_of" in graph.relation(xs[0].name, xs[-1].name)
    json.dumps(graph.to_dict())
    assert perception.memory is graph


def test_localize_gives_a_grasp_inside_the_mask_and_the_block_yaw() -> None:
    boxes = [SynthBox("red_block", (0.05, 0.0, 0.765), (0.05,) * 3, "red", 0.3),
             SynthBox("blue_block", (-0.15, 0.05, 0.76), (0.04,) * 3, "blue", -0.5)]
    from mallvi.perception.synthetic import head_camera

    K, T = head_camera()
    obs = render(boxes, K, T, 640, 360)
    for mode in ("sim", "color"):
        p = make_perception(mode)
        for box in boxes:
            (det,) = p.detect(obs, [box.name.replace("_", " ")])
            loc = p.localize(obs, det)
            assert loc.mask[loc.grasp.v, loc.grasp.u]
            assert np.linalg.norm(np.asarray(loc.position_world) - box.center_world) < 0.004
            assert loc.top_world[2] == pytest.approx(box.center_world[2] + box.size_m[2] / 2, abs=0.002)
            assert np.linalg.norm(np.asarray(loc.grasp_world)[:2] - box.center_world[:2]) < 0.03
            d = (loc.yaw_rad - box.yaw_rad + np.pi / 4) % (np.pi / 2) - np.pi / 4
            assert abs(d) < np.deg2rad(5), (mode, box.name, loc.yaw_rad)
            json.dumps(loc.to_dict())
        assert set(p.times.ms) >= {"detect", "fuse", "segment", "grasp", "project"}


def test_missing_object_is_an_empty_result_and_missing_depth_an_error() -> None:
    from mallvi.perception.synthetic import head_camera

    K, T = head_camera()
    obs = render([SynthBox("red_block", (0.0, 0.0, 0.765), (0.05,) * 3, "red")], K, T, 640, 360)
    p = make_perception("color")
    assert p.detect(obs, ["green block"]) == []
    (det,) = p.detect(obs, ["red block"])
    holes = Observation(obs.rgb, np.zeros_like(obs.depth_m), obs.K, obs.T_world_cam, "realsense", 0.0)
    with pytest.raises(LocalizationError):
        p.localize(holes, det)


def test_unknown_perception_mode_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("MALLVI_GROUNDING_DINO_MODEL", "MALLVI_OWLV2_MODEL", "MALLVI_SAM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ValueError, match="sim, color or neural"):
        make_perception("lidar")
    with pytest.raises(ValueError, match=r"grounding_dino_model.*MALLVI_OWLV2_MODEL"):
        make_perception("neural")
