"""Projection, grasp points and the scene graph on exact synthetic geometry."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mallvi.perception.grasp import grasp_point, principal_yaw
from mallvi.perception.projection import backproject, mask_geometry, project, support_z
from mallvi.perception.scene_graph import PerceivedObject, SceneGraph, object_id
from mallvi.perception.synthetic import SynthBox, head_camera, random_blocks, render
from mallvi.perception.types import LocalizationError

K, T_WORLD_CAM = head_camera()


def test_backproject_inverts_project() -> None:
    pts = np.array([[0.1, 0.05, 0.76], [-0.2, -0.1, 0.80], [0.25, 0.1, 0.74]])
    uv, z = project(pts, K, T_WORLD_CAM)
    for (u, v), d, p in zip(uv, z, pts, strict=True):
        np.testing.assert_allclose(backproject(u, v, d, K, T_WORLD_CAM), p, atol=1e-9)


def test_backproject_refuses_invalid_depth() -> None:
    with pytest.raises(LocalizationError, match="no valid depth"):
        backproject(10, 10, 0.0, K, T_WORLD_CAM)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_block_centres_from_masks_within_3mm(seed: int) -> None:
    boxes = random_blocks(np.random.default_rng(seed))
    obs = render(boxes, K, T_WORLD_CAM, 640, 360)
    table_z = support_z(obs)
    assert table_z == pytest.approx(0.74, abs=1e-3)
    for i, box in enumerate(boxes):
        geo = mask_geometry(obs.seg == i + 1, obs, table_z=table_z)
        err = np.linalg.norm(np.asarray(geo.center_world) - box.center_world)
        assert err < 0.003, f"{box.name}: centre error {err * 1000:.1f} mm"
        assert geo.extent_m[2] == pytest.approx(box.size_m[2], abs=0.004)
        # the top-face yaw recovers the cube's yaw modulo 90 degrees
        d = (geo.top_yaw_rad - box.yaw_rad + np.pi / 4) % (np.pi / 2) - np.pi / 4
        assert abs(d) < np.deg2rad(4)


def test_mask_without_depth_is_reported() -> None:
    obs = render([SynthBox("red_block", (0.0, 0.0, 0.765), (0.05,) * 3, "red")], K, T_WORLD_CAM, 640, 360)
    obs.depth_m[obs.seg == 1] = 0.0
    with pytest.raises(LocalizationError, match="valid depth"):
        mask_geometry(obs.seg == 1, obs)


def _disc(h: int, w: int, cu: float, cv: float, r: float) -> np.ndarray:
    v, u = np.mgrid[0:h, 0:w]
    return (u - cu) ** 2 + (v - cv) ** 2 <= r**2


def test_grasp_rules_put_the_point_inside_the_mask() -> None:
    ring = _disc(100, 100, 50, 50, 30) & ~_disc(100, 100, 50, 50, 20)  # centroid in the hole
    gp = grasp_point(ring, "irregular", seed=3)
    assert ring[gp.v, gp.u]
    assert 19 <= np.hypot(gp.u - 50, gp.v - 50) <= 31
    rim = grasp_point(ring, "rimmed")
    assert ring[rim.v, rim.u] and rim.v > 50  # the side nearer the robot (lower in the image)
    block = np.zeros((100, 100), bool)
    block[20:40, 30:70] = True
    gb = grasp_point(block, "block")
    assert abs(gb.u - 49.5) <= 1 and abs(gb.v - 29.5) <= 1
    round_ = grasp_point(_disc(100, 100, 60, 40, 12), "round")
    assert abs(round_.u - 60) <= 1 and abs(round_.v - 40) <= 1
    with pytest.raises(Exception, match="empty mask"):
        grasp_point(np.zeros((5, 5), bool), "block")


def test_principal_yaw_closes_across_the_narrow_side() -> None:
    bar = np.zeros((100, 100), bool)
    bar[45:55, 10:90] = True  # long along u: fingers must close along v
    assert abs(abs(principal_yaw(bar)) - np.pi / 2) < 0.05
    assert abs(principal_yaw(bar.T)) < 0.05


def _obj(oid: str, xyz: tuple[float, float, float], size: float = 0.05, label: str = "block") -> PerceivedObject:
    color, _, _ = oid.partition("_")
    return PerceivedObject(oid, label, color, "medium", xyz, (size, size, size), 1.0)


def test_scene_graph_relations_follow_geometry() -> None:
    g = SceneGraph.build([
        _obj("red_block", (0.0, 0.0, 0.765)),
        _obj("green_block", (0.0, 0.002, 0.815)),  # on red
        _obj("blue_block", (0.15, 0.0, 0.765)),  # right of red
        _obj("black_block", (0.0, 0.2, 0.765)),  # behind red (further from the robot)
        PerceivedObject("white_bowl", "bowl", "white", "large", (-0.2, 0.0, 0.77), (0.18, 0.18, 0.06), 1.0),
        _obj("yellow_block", (-0.2, 0.01, 0.765), 0.04),  # in the bowl
    ])
    assert g.relation("green_block", "red_block") == ["on"]
    assert "on" not in g.relation("red_block", "green_block")
    assert g.relation("blue_block", "red_block") == ["right_of"]
    assert g.relation("red_block", "blue_block") == ["left_of"]
    assert g.relation("black_block", "red_block") == ["behind"]
    assert g.relation("red_block", "black_block") == ["in_front_of"]
    assert g.relation("yellow_block", "white_bowl") == ["in"]
    assert g.relation("yellow_block", "red_block") == ["left_of"]  # 0.2 m apart: not near
    close = SceneGraph.build([_obj("red_block", (0.0, 0.0, 0.765)), _obj("blue_block", (0.07, 0.0, 0.765))])
    assert close.relation("blue_block", "red_block") == ["right_of", "near"]
    assert [o.id for o in g.find(color="red")] == ["red_block"]
    assert {o.id for o in g.find(label="block")} == {"red_block", "green_block", "blue_block", "black_block",
                                                      "yellow_block"}
    text = g.to_text()
    assert "green_block on red_block" in text and "yellow_block in white_bowl" in text


def test_scene_graph_round_trips_through_json() -> None:
    g = SceneGraph.build([_obj("red_block", (0.0, 0.0, 0.765)), _obj("blue_block", (0.1, 0.0, 0.765))])
    back = SceneGraph.from_dict(json.loads(json.dumps(g.to_dict())))
    assert back.objects == g.objects and back.relations == g.relations


def test_object_ids_number_duplicates() -> None:
    assert object_id("red", "block", []) == "red_block"
    assert object_id("red", "block", ["red_block"]) == "red_block_2"
    assert object_id("red", "block", ["red_block", "red_block_2"]) == "red_block_3"
    assert object_id(None, "bowl", []) == "bowl"


def test_segmenters_recover_the_block_mask() -> None:
    from mallvi.perception.segmentation import BoxGrabCutSegmenter, ColorMaskSegmenter, SimMaskSegmenter
    from mallvi.perception.types import Detection, mask_box

    obs = render([SynthBox("green_block", (0.05, 0.0, 0.765), (0.05,) * 3, "green", 0.4)], K, T_WORLD_CAM, 640, 360)
    truth = obs.seg == 1
    box = mask_box(truth)
    assert box is not None
    colored = Detection(box, 0.9, "green block", "color", "green")
    colorless = Detection((box[0] - 3, box[1] - 3, box[2] + 3, box[3] + 3), 0.9, "block", "owlv2", None)
    for seg, det in ((SimMaskSegmenter(), colored), (ColorMaskSegmenter(), colored),
                     (BoxGrabCutSegmenter(), colorless), (ColorMaskSegmenter(), colorless)):
        mask = seg.segment(obs, det)
        assert mask is not None
        iou = float((mask & truth).sum() / (mask | truth).sum())
        assert iou > 0.85, (seg.name, det.source, iou)


def test_a_top_level_in_a_gap_between_heights_falls_back_to_the_percentile() -> None:
    from mallvi.perception.projection import _top_level

    # 94 points low, two far above: the 98th percentile falls between the levels, near no point (was nan)
    z = np.concatenate([np.linspace(0.70, 0.75, 94), [0.85, 0.86]])
    top = _top_level(z, 0.008)
    assert np.isfinite(top) and 0.75 <= top <= 0.85
    assert abs(_top_level(np.full(50, 0.79), 0.008) - 0.79) < 1e-9  # one level: its height
