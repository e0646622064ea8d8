"""Pale objects standing on the table, found from depth where colour masks see nothing (synthetic RGB-D)."""

from __future__ import annotations

import numpy as np

from mallvi.perception.detectors import make_detector
from mallvi.perception.pipeline import make_perception
from mallvi.perception.rim import fit_circle
from mallvi.perception.synthetic import SynthBox, head_camera, render

K, T_WORLD_CAM = head_camera()
WHITE = SynthBox("white_box", (-0.10, 0.05, 0.74 + 0.03), (0.08, 0.08, 0.06), "white")
RED = SynthBox("red_block", (0.12, 0.0, 0.74 + 0.025), (0.05, 0.05, 0.05), "red")


def test_a_white_box_is_found_from_depth_and_a_red_block_stays_the_colour_detectors() -> None:
    obs = render([WHITE, RED], K, T_WORLD_CAM, 640, 360, with_seg=False)
    assert [d.color for d in make_detector("color").detect(obs, [])] == ["red"]
    raised = make_detector("raised").detect(obs, [])
    assert [d.color for d in raised] == ["white"]  # the red block's pixels are left to colour
    graph = make_perception("color").describe(obs, remember=False)
    by_colour = {o.color: o for o in graph.objects}
    assert set(by_colour) == {"red", "white"}
    assert np.linalg.norm(np.asarray(by_colour["white"].position_world) - WHITE.center_world) < 0.008
    assert abs(by_colour["white"].extent_m[2] - 0.06) < 0.006


def test_nothing_on_the_table_and_no_depth_give_no_raised_objects() -> None:
    empty = render([], K, T_WORLD_CAM, 640, 360, with_seg=False)
    assert make_detector("raised").detect(empty, []) == []
    obs = render([WHITE], K, T_WORLD_CAM, 640, 360, with_seg=False)
    no_depth = type(obs)(obs.rgb, np.zeros_like(obs.depth_m), obs.K, obs.T_world_cam, obs.camera, obs.stamp)
    assert make_detector("raised").detect(no_depth, []) == []


def test_a_query_for_another_colour_is_not_answered_by_a_pale_object() -> None:
    obs = render([WHITE], K, T_WORLD_CAM, 640, 360, with_seg=False)
    assert make_detector("raised").detect(obs, ["blue block"]) == []
    answered = make_detector("raised").detect(obs, ["white bowl"])  # shape unsure: answered, ranked lower
    plain = make_detector("raised").detect(obs, [])
    assert len(answered) == 1 and answered[0].score < plain[0].score


def test_a_circle_through_half_an_arc_finds_its_centre() -> None:
    a = np.linspace(0.0, np.pi, 50)
    xy = np.column_stack([0.3 + 0.04 * np.cos(a), -0.1 + 0.04 * np.sin(a)])
    xy += np.random.default_rng(0).normal(scale=0.0005, size=xy.shape)
    centre, radius, residual = fit_circle(xy)
    assert np.linalg.norm(centre - [0.3, -0.1]) < 0.002 and abs(radius - 0.04) < 0.002 and residual < 0.001


def test_dominant_color_counts_the_mask_only_and_takes_a_precomputed_hsv() -> None:
    from mallvi.perception.color_masks import dominant_color, to_hsv

    rgb = np.zeros((40, 60, 3), dtype=np.uint8)
    rgb[:, :20] = (220, 30, 30)  # red
    rgb[:, 20:] = (30, 40, 220)  # blue, two thirds of the picture
    mask = np.zeros((40, 60), dtype=bool)
    mask[:, 5:30] = True  # 15 red columns, 10 blue
    assert dominant_color(rgb, mask) == "red"
    assert dominant_color(rgb, mask, to_hsv(rgb)) == "red"
    assert dominant_color(rgb, ~mask) == "blue"
    assert dominant_color(rgb, np.zeros_like(mask)) is None


def test_a_colour_mask_is_the_same_for_an_image_its_pixels_and_a_strided_view() -> None:
    from mallvi.perception.color_masks import BLACK_V_MAX, HSV_RANGES, color_mask
    from mallvi.perception.query_words import COLORS

    rng = np.random.default_rng(3)
    hsv = rng.integers(0, 256, (60, 80, 3), dtype=np.uint8)
    hsv[..., 0] %= 180
    for c in COLORS:
        whole = color_mask(hsv, c)
        assert np.array_equal(color_mask(hsv.reshape(-1, 3), c), whole.reshape(-1))
        assert np.array_equal(color_mask(hsv[::2, 1::3], c), whole[::2, 1::3])
        if c != "black":  # the thresholds as written: inclusive bounds, and never a black pixel
            r = HSV_RANGES[c]
            h, s, v = (hsv[..., k].astype(int) for k in range(3))
            want = (s >= r.s_min) & (s <= r.s_max) & (v >= r.v_min) & (v <= r.v_max) & (v > BLACK_V_MAX)
            want &= np.any([(h >= lo) & (h <= hi) for lo, hi in r.hues], axis=0)
            assert np.array_equal(whole, want), c
