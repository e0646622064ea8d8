"""Seeded randomisation helpers: placement with spacing, failures reported as SceneSetupError, colours, clutter."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import sapien
from hypothesis import given, settings
from hypothesis import strategies as st

from mallvi.sim_bridge.distractors import Area, ClutterSpec, place_distractors
from mallvi.sim_bridge.objects import BLOCK_COLORS, PALETTE, rgb_of
from mallvi.sim_bridge.randomization import (
    KeepOut,
    Region,
    choose_colors,
    jitter_rgb,
    sample_positions,
    side_region,
)
from mallvi.sim_bridge.scene_spec import SceneSetupError


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 4), spacing=st.floats(0.02, 0.12))
def test_sampled_positions_respect_regions_spacing_and_keep_out(seed: int, n: int, spacing: float) -> None:
    rng = np.random.default_rng(seed)
    regions = [side_region((0.02, 0.28), (-0.08, 0.05), "left" if i % 2 else "right") for i in range(n)]
    keep = [KeepOut(0.0, -0.13, 0.08)]
    try:
        xy = sample_positions(rng, regions, min_spacing_m=spacing, keep_out=keep)
    except SceneSetupError:
        return  # allowed, but must be the clear error
    for (x, y), r in zip(xy, regions, strict=True):
        assert r.contains(x, y)
        assert math.hypot(x - 0.0, y + 0.13) >= 0.08
    for i in range(n):
        for j in range(i):
            assert math.hypot(xy[i][0] - xy[j][0], xy[i][1] - xy[j][1]) >= spacing


def test_impossible_placement_raises_scene_setup_error() -> None:
    tiny = Region(0.0, 0.05, 0.0, 0.05)
    with pytest.raises(SceneSetupError, match="could not place object 2 of 3"):
        sample_positions(np.random.default_rng(0), [tiny] * 3, min_spacing_m=0.1, max_tries=50)


def test_same_seed_same_draws_different_seed_different_draws() -> None:
    regions = [Region(-0.28, 0.28, -0.08, 0.05)] * 3

    def draw(seed: int) -> list[tuple[float, float]]:
        return sample_positions(np.random.default_rng(seed), regions, min_spacing_m=0.1)

    assert draw(7) == draw(7)
    assert draw(7) != draw(8)


def test_colours_are_distinct_and_jitter_stays_close() -> None:
    rng = np.random.default_rng(3)
    colors = choose_colors(rng, len(BLOCK_COLORS))
    assert sorted(colors) == sorted(BLOCK_COLORS)
    with pytest.raises(ValueError, match="distinct colours"):
        choose_colors(rng, len(BLOCK_COLORS) + 1)
    shade = jitter_rgb(rng, "red", amount=0.04)
    assert shade != rgb_of("red")
    assert max(abs(a - b) for a, b in zip(shade, rgb_of("red"), strict=True)) <= 0.04
    with pytest.raises(ValueError, match="unknown colour 'mauve'"):
        rgb_of("mauve")


def test_distractors_stay_out_of_prohibited_areas_and_can_be_absent() -> None:
    keep = (Area(0.04, -0.06, 0.16, 0.06), Area(-0.21, -0.11, -0.09, 0.01))
    spec = ClutterSpec(work_areas=keep, clean_rate=0.0)
    full = place_distractors(sapien.Scene(), np.random.default_rng(11), 0.74, spec, []).objects
    assert 5 <= len(full) <= 10
    for obj in full.values():
        x, y, z = obj.pose.p
        assert z == pytest.approx(0.741)
        r = 0.5 * math.hypot(obj.size_m[0], obj.size_m[1])
        assert not any(a.near(x, y, r) for a in keep)
        assert obj.label != "block", "a distractor must not pass for a task block"
    empty = place_distractors(sapien.Scene(), np.random.default_rng(11), 0.74, replace(spec, clean_rate=1.0), [])
    assert empty.objects == {} and empty.clean
    again = place_distractors(sapien.Scene(), np.random.default_rng(11), 0.74, spec, []).objects
    assert [(o.label, o.color, o.pose.p.tolist()) for o in again.values()] == [
        (o.label, o.color, o.pose.p.tolist()) for o in full.values()
    ]
    assert {o.color for o in full.values()} <= set(PALETTE)
