"""Colour and simulator detectors, and fusion, on synthetic RGB-D frames with exact ground truth."""

from __future__ import annotations

import numpy as np
import pytest

from mallvi.contracts.observation import Observation
from mallvi.perception.detectors import make_detector
from mallvi.perception.fusion import FusionConfig, fuse
from mallvi.perception.scene_graph import PerceivedObject, SceneGraph
from mallvi.perception.synthetic import SynthBox, degrade, head_camera, random_blocks, render
from mallvi.perception.types import Detection, PerceptionError, box_iou, mask_box

K, T_WORLD_CAM = head_camera()
COLORS = ("red", "green", "blue", "yellow", "black")


def _scene(seed: int, colors: tuple[str, ...] = COLORS) -> tuple[list[SynthBox], Observation]:
    boxes = random_blocks(np.random.default_rng(seed), colors, min_gap_m=0.09)
    return boxes, render(boxes, K, T_WORLD_CAM, 640, 360)


def _best_iou(det: Detection, obs: Observation) -> tuple[str, float]:
    assert obs.seg is not None
    best = ("", 0.0)
    for i, name in obs.seg_names.items():
        gt = mask_box(obs.seg == i)
        if gt is not None and box_iou(det.box_xyxy, gt) > best[1]:
            best = (name, box_iou(det.box_xyxy, gt))
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_color_detector_finds_every_block_and_nothing_else(seed: int) -> None:
    boxes, obs = _scene(seed)
    dets = make_detector("color").detect(obs, [])
    assert len(dets) == len(boxes), [d.label for d in dets]
    for det in dets:
        name, iou = _best_iou(det, obs)
        assert iou >= 0.8, f"{det.label}: IoU {iou:.2f}"
        assert name == f"{det.color}_block"
        assert det.label == f"{det.color} block"


@pytest.mark.parametrize("gain", [0.55, 1.0, 1.35])
def test_color_detector_survives_lighting_and_sensor_noise(gain: float) -> None:
    _, clean = _scene(7)
    obs = degrade(clean, np.random.default_rng(1), gain=gain, pixel_noise=5.0)
    assert obs.seg is None
    dets = make_detector("color").detect(obs, [])
    assert sorted(d.color or "" for d in dets) == sorted(COLORS)
    for det in dets:
        assert _best_iou(det, clean)[1] >= 0.8


def test_color_detector_ignores_an_empty_table_and_its_shadows() -> None:
    obs = render([], K, T_WORLD_CAM, 640, 360)
    # paint a dark "shadow" and a red sticker flat on the table: neither stands above it
    obs.rgb[200:230, 300:340] = (20, 20, 22)
    obs.rgb[250:270, 100:140] = (200, 30, 30)
    assert make_detector("color").detect(obs, []) == []


def test_color_queries_select_colour_and_shape() -> None:
    _, obs = _scene(3)
    det = make_detector("color")
    blue = det.detect(obs, ["the blue cube"])
    assert [d.color for d in blue] == ["blue"] and blue[0].query == "the blue cube"
    assert [d.color for d in det.detect(obs, ["green"])] == ["green"]
    assert det.detect(obs, ["purple block"]) == []
    (as_ball,) = det.detect(obs, ["red ball"])  # a cube is not round: still found, but ranked lower
    (as_block,) = det.detect(obs, ["red block"])
    assert as_ball.box_xyxy == as_block.box_xyxy and as_ball.score < 0.7 * as_block.score
    assert {d.color for d in det.detect(obs, ["red block", "yellow block"])} == {"red", "yellow"}


def test_sim_detector_uses_segmentation_and_needs_it() -> None:
    boxes, obs = _scene(4, ("red", "green", "blue"))
    names = dict(obs.seg_names)
    assert obs.seg is not None
    obs.seg[obs.seg == 0] = 99  # everything else is "table"
    names[99] = "table"
    obs = Observation(obs.rgb, obs.depth_m, obs.K, obs.T_world_cam, "head", 0.0, obs.seg, names)
    dets = make_detector("sim").detect(obs, [])
    assert sorted(d.instance or "" for d in dets) == sorted(b.name for b in boxes)
    assert all(d.score == 1.0 and d.source == "sim" for d in dets)
    assert [d.instance for d in make_detector("sim").detect(obs, ["green cube"])] == ["green_block"]
    no_seg = degrade(obs, np.random.default_rng(0))
    with pytest.raises(PerceptionError, match="segmentation"):
        make_detector("sim").detect(no_seg, [])


def test_unknown_detector_name_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"unknown detector 'yolo'.*color"):
        make_detector("yolo")


def _d(box: tuple[float, float, float, float], score: float, source: str, color: str | None = "red") -> Detection:
    return Detection(box, score, f"{color} block" if color else "block", source, color, {source: score})


def test_fusion_merges_agreeing_detectors_and_keeps_their_scores() -> None:
    fused = fuse({
        "color": [_d((100, 100, 140, 140), 0.8, "color")],
        "owlv2": [_d((102, 101, 141, 142), 0.4, "owlv2", None), _d((300, 50, 330, 90), 0.3, "owlv2", None)],
    })
    assert len(fused) == 2
    top = fused[0]
    assert top.source == "fused" and top.color == "red"
    assert set(top.scores) == {"color", "owlv2"}
    assert top.score > 0.9 * 0.8  # two detectors agreeing beat the colour detector alone
    assert box_iou(top.box_xyxy, (100, 100, 140, 140)) > 0.9
    assert fused[1].score < top.score


def test_fusion_weights_rank_detectors() -> None:
    dets = {"color": [_d((100, 100, 140, 140), 0.8, "color")],
            "owlv2": [_d((300, 50, 340, 90), 0.8, "owlv2", "red")]}
    default = fuse(dets, config=FusionConfig(platt={}))
    assert default[0].scores.keys() == {"color"}  # colour is trusted more (0.9 vs 0.75)
    flipped = fuse(dets, config=FusionConfig(platt={}), weights={"owlv2": 1.0, "color": 0.2})
    assert flipped[0].scores.keys() == {"owlv2"}


def test_fusion_does_not_merge_different_colours_and_returns_nothing_for_nothing() -> None:
    fused = fuse({"color": [_d((100, 100, 140, 140), 0.8, "color")],
                  "grounding_dino": [_d((101, 100, 140, 141), 0.6, "grounding_dino", "blue")]})
    assert {d.color for d in fused} == {"red", "blue"}
    assert fuse({}) == [] and fuse({"color": [], "owlv2": []}) == []


def test_fusion_prefers_detections_the_scene_graph_supports() -> None:
    _, obs = _scene(5, ("red", "green"))
    red_obj = next(b for b in random_blocks(np.random.default_rng(5), ("red", "green"), min_gap_m=0.09)
                   if b.color == "red")
    graph = SceneGraph.build([PerceivedObject("red_block", "block", "red", "medium", red_obj.center_world,
                                          red_obj.size_m, 1.0)])
    dets = make_detector("color").detect(obs, ["red block"])
    wrong = Detection((5, 5, 40, 40), dets[0].score, "red block", "color", "red", {"color": dets[0].score})
    fused = fuse({"color": [wrong, *dets]}, scene_graph=graph, obs=obs)
    assert fused[0].box_xyxy == pytest.approx(dets[0].box_xyxy)
    assert fused[0].scores["scene_graph"] == 1.0 and fused[1].scores["scene_graph"] < 1.0
    assert fused[0].score > fused[1].score


def test_fusion_keeps_the_box_of_a_detection_that_scored_zero_but_the_scene_graph_supports() -> None:
    _, obs = _scene(5, ("red", "green"))
    red_obj = next(b for b in random_blocks(np.random.default_rng(5), ("red", "green"), min_gap_m=0.09)
                   if b.color == "red")
    graph = SceneGraph.build([PerceivedObject("red_block", "block", "red", "medium", red_obj.center_world,
                                          red_obj.size_m, 1.0)])
    box = make_detector("color").detect(obs, ["red block"])[0].box_xyxy
    faint = Detection(box, 0.0, "red block", "color", "red", {"color": 0.0})  # e.g. a ragged outline
    fused = fuse({"color": [faint]}, scene_graph=graph, obs=obs)
    assert len(fused) == 1 and fused[0].box_xyxy == pytest.approx(box)  # was (0, 0, 0, 0): a crash


def test_white_is_searched_only_when_asked_for() -> None:
    obs = render([SynthBox("white_block", (0.0, 0.0, 0.765), (0.05,) * 3, "white"),
                  SynthBox("red_block", (0.12, 0.0, 0.765), (0.05,) * 3, "red")], K, T_WORLD_CAM, 640, 360)
    det = make_detector("color")
    assert [d.label for d in det.detect(obs, [])] == ["red block"]  # grey robot links would read as white
    (white,) = det.detect(obs, ["the white cube"])
    assert white.color == "white" and _best_iou(white, obs) == ("white_block", pytest.approx(1.0, abs=0.1))


def test_platt_fit_recovers_the_score_to_probability_map() -> None:
    from mallvi.perception.fusion import calibrate, fit_platt

    rng = np.random.default_rng(0)
    raw = rng.uniform(0.0, 0.6, 4000)
    correct = rng.random(raw.size) < 1.0 / (1.0 + np.exp(-(12.0 * raw - 3.0)))
    a, b = fit_platt(raw, correct)
    assert a == pytest.approx(12.0, rel=0.15) and b == pytest.approx(-3.0, rel=0.15)
    cfg = FusionConfig(platt={"owlv2": (a, b)})
    assert calibrate("owlv2", 0.25, cfg) == pytest.approx(0.5, abs=0.05)
    with pytest.raises(ValueError, match="at least two"):
        fit_platt([0.5], [True])
