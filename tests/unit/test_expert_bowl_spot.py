"""The stack_bowls_three expert's first bowl goes where it cannot land on another: over the task's own layouts
(which keep bowls only 0.13 m from the front spot), the chosen spot stands 0.19 m clear of the other two bowls."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from mallvi.bench.agents.expert_planning import BOWL_FRONT_XY, _bowl_base
from mallvi.bench.tasks.stack_bowls_three import BOWLS, MIN_SPACING_M, sample_bowl_positions


def _ctx(xy: list[tuple[float, float]]) -> Any:
    """Just what ``_bowl_base`` reads: each bowl's frame pose."""
    objects = {n: SimpleNamespace(frame_pose=lambda p=p: SimpleNamespace(p=np.array([p[0], p[1], 0.73])))
               for n, p in zip(BOWLS, xy, strict=True)}
    return SimpleNamespace(world=SimpleNamespace(objects=objects))


def test_the_front_spot_is_kept_where_it_is_clear() -> None:
    first, spot = _bowl_base(_ctx([(-0.25, -0.10), (0.25, -0.10), (0.25, 0.12)]))
    assert spot == BOWL_FRONT_XY and first == "bowl1"


def test_a_bowl_near_the_front_spot_moves_the_spot_away_from_it() -> None:
    xy = [(-0.137, -0.103), (0.138, -0.124), (0.28, 0.115)]  # both near bowls 0.14 m from the front spot
    first, spot = _bowl_base(_ctx(xy))
    others = [p for n, p in zip(BOWLS, xy, strict=True) if n != first]
    assert spot != BOWL_FRONT_XY
    assert all(math.dist(spot, p) >= MIN_SPACING_M for p in others)


@pytest.mark.parametrize("seed", range(5))
def test_over_sampled_layouts_the_spot_is_clear_of_the_other_bowls(seed: int) -> None:
    rng = np.random.default_rng(seed)
    clear = 0
    n = 200
    for _ in range(n):
        xy = sample_bowl_positions(rng)
        first, spot = _bowl_base(_ctx(xy))
        others = [p for name, p in zip(BOWLS, xy, strict=True) if name != first]
        if all(math.dist(spot, p) >= MIN_SPACING_M for p in others):
            clear += 1
        assert math.dist(spot, BOWL_FRONT_XY) <= 0.0849 + 1e-9  # within the 6 cm square around the front spot
    assert clear == n
