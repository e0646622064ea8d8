"""Domain randomisation per task as the original's task configs: distractors, textures, light colours, table height."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sapien

from mallvi.bench.domains import TASK_DOMAINS, is_cluttered, task_domain
from mallvi.bench.tasks import TASKS, get_task
from mallvi.bench.tiers import FINE_TASKS, PLANNING_TASKS
from mallvi.perception.pipeline import make_perception
from mallvi.sim_bridge import layout
from mallvi.sim_bridge.distractors import TALL_ABOVE_M, object_area
from mallvi.sim_bridge.scenes import SPATIAL_CLUTTER
from mallvi.sim_bridge.world import SimWorld

#: the original's evaluation scripts run these two Tier 2 tasks on config_franka_0_6_clean; the other twelve
#: and all five Tier 3 tasks on a cluttered config, Tier 1 sparse/dense on config_spatial_clean
CLEAN_TIER2 = {"blocks_tower", "blocks_cross_shape"}


def _world(name: str, seed: int, randomization: str = "original", **kw: Any) -> SimWorld:
    kw.setdefault("render", False)
    return SimWorld.create(get_task(name).scene_spec(randomization), seed, **kw)


def _distractors(w: SimWorld) -> dict[str, Any]:
    return {n: w.objects[n] for n in w.metadata.get("clutter", [])}


def _snapshot(w: SimWorld) -> dict[str, Any]:
    dom = dict(w.metadata["domain"])
    poses = {n: [round(float(v), 6) for v in o.pose.p] for n, o in sorted(w.objects.items())}
    return {"domain": dom, "poses": poses}


def test_which_tasks_are_cluttered_follows_the_original_configs() -> None:
    assert set(TASK_DOMAINS) == set(TASKS), "every task has its row"
    cluttered = {t for t in TASKS if is_cluttered(t)}
    assert cluttered == (set(PLANNING_TASKS) - CLEAN_TIER2) | set(FINE_TASKS) | {"grounding_cluttered"}
    assert len(set(PLANNING_TASKS) & cluttered) == 12
    for t in TASKS:  # every config randomises textures and lights
        dom = task_domain(t)
        assert dom.visual is not None and dom.visual.random_background and dom.visual.random_light
    assert task_domain("stack_blocks_three", "none").clutter is None
    assert task_domain("grab_roller", "none").visual is None


@pytest.mark.parametrize("name", ["stack_blocks_three", "put_bottles_dustbin", "place_object_scale", "blocks_tower"])
def test_randomisation_is_a_pure_function_of_task_and_seed(name: str) -> None:
    a, b, c = _world(name, 200010), _world(name, 200010), _world(name, 200011)
    try:
        assert _snapshot(a) == _snapshot(b)
        assert _snapshot(a)["domain"] != _snapshot(c)["domain"]
    finally:
        for w in (a, b, c):
            w.close()


def test_the_task_objects_stay_where_they_were_without_randomisation() -> None:
    for name in ("stack_blocks_three", "hanging_mug", "grab_roller"):
        with _world(name, 200012) as plain, _world(name, 200012, "none") as clean_world:
            task_objs = [n for n in plain.objects if n not in plain.metadata.get("clutter", [])]
            assert sorted(task_objs) == sorted(clean_world.objects)
            for n in task_objs:
                assert np.allclose(plain.objects[n].pose.p, clean_world.objects[n].pose.p)
            assert clean_world.metadata["domain"]["profile"] == "none"
            assert "table_texture" not in clean_world.metadata["domain"]


def test_two_tasks_with_one_seed_get_different_tables() -> None:
    drawn = set()
    for name in ("place_burger_fries", "place_object_basket", "hanging_mug", "handover_mic"):
        with _world(name, 200013) as w:
            d = w.metadata["domain"]
            drawn.add((d["table_texture"], d["wall_texture"], str(d["light"]["colors"])))
    assert len(drawn) == 4


@pytest.mark.parametrize("name", sorted(TASKS))
def test_distractor_counts_and_places_as_configured(name: str) -> None:
    counts = []
    for seed in (200020, 200021, 200022):
        with _world(name, seed) as w:
            dom = w.metadata["domain"]
            found = _distractors(w)
            if not is_cluttered(name):
                assert found == {} and not dom["cluttered"] and "distractors" not in dom
                continue
            assert dom["cluttered"]
            assert dom["distractors"]["count"] == len(found) <= 10 == dom["distractors"]["max"]
            counts.append(len(found))
            spec = task_domain(name).clutter or SPATIAL_CLUTTER  # Tier 1: the shared scene places them
            task_objs = [o for n, o in w.objects.items() if n not in found]
            labels = {o.label for o in task_objs}
            colors = {o.color for o in task_objs}
            for d in found.values():
                x, y = (float(v) for v in d.pose.p[:2])
                r = 0.5 * math.hypot(d.size_m[0], d.size_m[1])
                assert abs(x) + r <= 0.6 and abs(y) + r <= 0.35, "on the table"
                assert d.label not in labels and d.color not in colors, "never taken for a task object"
                assert d.size_m[2] <= TALL_ABOVE_M or y - r >= 0.0, "a tall distractor only on the far half"
                for o in task_objs:
                    pad = spec.padding_by_name.get(o.name, spec.padding_m)
                    assert not object_area(o, pad).near(x, y, r), f"{d.name} in {o.name}'s area"
                for area in spec.work_areas:
                    assert not area.near(x, y, r), f"{d.name} in the work area {area}"
    if counts:
        assert max(counts) >= 6, f"{name}: the table is hardly cluttered: {counts}"


def test_a_crowded_table_places_fewer_and_says_so() -> None:
    from mallvi.sim_bridge.distractors import Area, ClutterSpec, place_distractors

    spec = ClutterSpec(table=Area(-0.07, -0.07, 0.07, 0.07), clean_rate=0.0)  # room for a few
    placed = place_distractors(sapien.Scene(), np.random.default_rng(3), 0.74, spec, [])
    rec = placed.record()
    assert 1 <= rec["count"] < 10 and rec["failures"] == spec.max_failures
    assert len(placed.objects) == rec["count"]


def test_table_height_offset_moves_the_table_not_the_absolute_check_heights() -> None:
    task = get_task("grab_roller")
    tops = {}
    for seed in range(200030, 200040):
        with _world("grab_roller", seed) as w:
            tops[seed] = w.table_top_z
    low, high = min(tops, key=tops.__getitem__), max(tops, key=tops.__getitem__)
    assert tops[high] - tops[low] > 0.01, "the offset U[-0.03, 0] varies between seeds"
    outcome = {}
    for seed in (low, high):
        with _world("grab_roller", seed) as w:
            top = next(e for e in w.scene.entities if e.name == "table")
            assert float(top.pose.p[2]) + layout.TABLE_SIZE_M[2] / 2 == pytest.approx(w.table_top_z)
            assert w.metadata["domain"]["table_top_z_m"] == pytest.approx(w.table_top_z, abs=1e-5)
            roller = w.objects["roller"]
            for z in (0.795, 0.805):  # the axis below / above the original's 0.80 m (world z, whatever the table)
                axis_from_origin = roller.size_m[2] / 2
                pose = sapien.Pose([0.0, -0.1, z - axis_from_origin], list(roller.pose.q))
                roller.entity.set_pose(pose)
                held = {c.name: c for c in task.evaluate(w).conditions}["roller axis z (world)"]
                outcome[(seed, z)] = (held.held, z - w.table_top_z)
    for z in (0.795, 0.805):  # the same world height gives the same outcome on either table
        assert outcome[(low, z)][0] == outcome[(high, z)][0] == (z > 0.80)
        assert abs(outcome[(low, z)][1] - outcome[(high, z)][1]) > 0.01  # at different heights above the table


def test_tier1_cluttered_setting_has_distractors_and_scores_only_the_blocks() -> None:
    task = get_task("grounding_cluttered")
    with _world("grounding_cluttered", 200040) as w:
        dom = w.metadata["domain"]
        assert dom["profile"] == "config_spatial_cluttered" and dom["cluttered"]
        assert dom["table_texture"] is not None or dom["wall_texture"] is not None or dom["light"]
        found = _distractors(w)
        assert 6 <= len(found) <= 10
        assert sorted(task.truth(w)) == ["blue_block", "green_block", "red_block"], "distractors are not asked"
        assert task.hints(w)["blocks"] == ["blue_block", "green_block", "red_block"]
        assert task.score(w, task.truth(w)) == 100.0, "the three right answers are a full score"
    with _world("grounding_sparse", 200040) as w:
        assert w.metadata.get("clutter") is None and w.metadata["domain"]["profile"] == "config_spatial_clean"


@pytest.mark.slow
def test_a_cluttered_tier2_scene_shows_its_distractors_and_perception_lists_them() -> None:
    with _world("stack_blocks_three", 200050, render=True, cameras=("head",)) as w:
        w.settle(max_s=1.0)
        found = _distractors(w)
        assert len(found) >= 6
        obs = w.observe("head")
        masks = {n: obs.mask_of(n) for n in found}
        visible = {n for n, m in masks.items() if m is not None and int(np.count_nonzero(m)) >= 30}
        assert len(visible) >= len(found) // 2, f"only {sorted(visible)} of {sorted(found)} in view"
        graph = make_perception("sim").describe(obs)
        assert {"red_block", "green_block", "blue_block"} <= {o.id for o in graph.objects}
        located = [np.asarray(o.position_world[:2]) for o in graph.objects]
        for n in visible:  # each distractor in view is in the scene graph where it stands
            xy = np.asarray(found[n].pose.p[:2], dtype=float)
            assert min(float(np.linalg.norm(xy - c)) for c in located) < 0.03, f"perception missed {n}"
        dom = w.metadata["domain"]
        assert dom["table_texture"] is None or dom["table_texture"].split("-")[0] in (
            "wood", "cloth", "stone", "tiles", "stripes", "paint")
        colours = make_perception("color").describe(obs)
        assert len(colours.objects) > 3, "the colour detector sees the distractors too"


def test_the_prompt_facts_name_the_task_objects_not_the_distractors() -> None:
    from mallvi.bench.agents.single_info import example_reply
    from mallvi.bench.tasks.task_base import task_object_names

    with _world("handover_mic", 200060) as w:
        assert _distractors(w), "a cluttered table"
        facts = get_task("handover_mic").hints(w)["objects"]
        assert sorted(facts) == ["microphone"]
        example = example_reply(task_object_names(w), "planning")
        assert example["executable_plan"][0]["parameters"]["actor"] == "microphone"


def test_episode_records_results_and_table_say_which_randomisation_ran(tmp_path: Path) -> None:
    from mallvi.bench.bench_config import BenchConfig
    from mallvi.bench.runner import RunDirError, run_bench

    cfg = BenchConfig(tier="grounding", tasks=("grounding_cluttered",), episodes=1, seed_start=200070,
                      agent="expert", save_images=False)  # fmt: skip
    results = run_bench(cfg, tmp_path / "run")
    rec = json.loads((tmp_path / "run" / "episodes.jsonl").read_text().splitlines()[0])
    dom = rec["randomization"]
    assert dom["profile"] == "config_spatial_cluttered" and dom["cluttered"]
    assert dom["distractors"]["count"] == len(dom["distractors"]["objects"]) == len(
        [n for n in rec["final_xyz"] if n.startswith("clutter_")])
    summary = results["tasks"]["grounding_cluttered"]["randomization"]
    assert summary["profiles"] == ["config_spatial_cluttered"] and summary["cluttered"]
    assert summary["distractors"]["max"] == dom["distractors"]["count"]
    table = (tmp_path / "run" / "table.md").read_text()
    assert "Domain randomisation: the original's per task" in table and "grounding_cluttered (" in table
    with pytest.raises(RunDirError, match="other settings"):  # a plain-table run is another run
        run_bench(replace(cfg, randomization="none"), tmp_path / "run")
