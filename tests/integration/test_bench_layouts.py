"""Every task's layout sampler places its scene on every seed (no seed skipped), inside the original's ranges."""

from __future__ import annotations

import numpy as np
import pytest
import sapien

from mallvi.bench.tasks import TASKS, get_task
from mallvi.sim_bridge import layout
from mallvi.sim_bridge.scene_spec import SceneContents

SEEDS = range(300, 400)  # 100 seeds per task; only the objects are built (no arms, no rendering)


def _build(name: str, seed: int) -> tuple[SceneContents, float]:
    """The task's scene as SimWorld.create draws it for ``seed`` (the table offset first, then the objects)."""
    rng = np.random.default_rng(seed)
    table_top_z = layout.TABLE_TOP_NOMINAL_Z_M + float(rng.uniform(*layout.TABLE_TOP_OFFSET_RANGE_M))
    return get_task(name).scene_spec().build(sapien.Scene(), rng, table_top_z), table_top_z


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_seed_sets_up_its_scene(name: str) -> None:
    for seed in SEEDS:
        contents, table_top_z = _build(name, seed)  # a SceneSetupError here is a defect of the sampler
        assert contents.objects, f"{name} seed {seed}: no objects"
        for obj in contents.objects.values():
            p = obj.pose.p
            assert abs(float(p[0])) < 0.6 and -0.35 < float(p[1]) < 0.35, (
                f"{name} seed {seed}: {obj.name} off the table"
            )
            assert float(p[2]) >= table_top_z - 1e-6


def _xy(contents: SceneContents, name: str) -> tuple[float, float]:
    p = contents.objects[name].pose.p
    return float(p[0]), float(p[1])


def test_the_skillet_starts_on_the_far_side_from_the_bread() -> None:
    for name in ("place_bread_skillet", "place_bread_skillet_ee"):
        for seed in SEEDS:
            contents, _ = _build(name, seed)
            (bx, by), (sx, sy) = _xy(contents, "bread"), _xy(contents, "skillet")
            assert 0.20 <= abs(bx) <= 0.28 and -0.20 <= by <= 0.05
            assert 0.15 <= abs(sx) <= 0.25 and -0.20 <= sy <= 0.05
            assert np.sign(bx) == -np.sign(sx), f"{name} seed {seed}: skillet on the bread's side"
            arms = contents.metadata
            assert arms["skillet_arm"] == ("left" if sx < 0 else "right") != arms["bread_arm"]


def test_bowls_spread_over_the_original_ranges() -> None:
    xs, ys = [], []
    for seed in SEEDS:
        contents, _ = _build("stack_bowls_three", seed)
        for n in ("bowl1", "bowl2", "bowl3"):
            x, y = _xy(contents, n)
            assert abs(x) >= 0.09 and abs(x) <= 0.30 and -0.15 <= y <= 0.15
            assert np.hypot(x, y + 0.10) >= 0.13
            xs.append(x)
            ys.append(y)
    assert max(np.abs(xs)) > 0.27 and max(ys) > 0.10 and min(ys) < -0.12  # the whole range is used


def test_grounding_sparse_uses_red_green_blue_away_from_the_centre() -> None:
    for seed in SEEDS:
        contents, _ = _build("grounding_sparse", seed)
        assert sorted(contents.objects) == ["blue_block", "green_block", "red_block"]
        for n in contents.objects:
            x, y = _xy(contents, n)
            assert abs(x) >= 0.05 and np.hypot(x, y + 0.10) >= 0.10


@pytest.mark.parametrize("name", ["place_bread_skillet", "place_bread_skillet_ee"])
def test_the_skillet_rests_where_it_was_placed(name: str) -> None:
    """Seeds whose skillet once spawned inside an arm's pedestal (thrown at the first physics step): the scene
    now rests, arms still, for 0.4 s."""
    from mallvi.sim_bridge.world import SimWorld

    for seed in (600003, 600007, 600029):
        with SimWorld.create(get_task(name).scene_spec(), seed, render=False) as w:
            start = {n: np.array(o.pose.p) for n, o in w.objects.items()}
            w.step(100)
            for n, o in w.objects.items():
                moved = float(np.linalg.norm(np.array(o.pose.p) - start[n]))
                assert moved < 0.01, f"{name} seed {seed}: {n} moved {moved:.3f} m with nothing touching it"
