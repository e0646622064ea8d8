"""``mallvi compare A B`` puts two bench folders side by side per task and per seed; ``mallvi tasks`` lists the
tiers and tasks as the benchmark runs them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.runner import run_bench
from mallvi.bench.tiers import TIER_TASKS
from mallvi.cli import main

TASK = "place_burger_fries"


@pytest.fixture(scope="module")
def two_folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A: the expert's real run of 2 seeds. B: the same run as another setting gave it: seed 100001 went the other
    way there."""
    root = tmp_path_factory.mktemp("compare")
    a, b = root / "a", root / "b"
    run_bench(BenchConfig(tier="planning", tasks=(TASK,), episodes=2, agent="expert", save_images=False), a,
              workers=1)
    shutil.copytree(a, b)
    run = json.loads((b / "run.json").read_text())
    run["config"]["randomization"] = run["identity"]["randomization"] = "none"
    (b / "run.json").write_text(json.dumps(run))
    lines = [json.loads(x) for x in (b / "episodes.jsonl").read_text().splitlines()]
    for rec in lines:
        if rec["seed"] == 100001 and rec["success"]:
            rec.update(success=False, conditions=[{"name": "burger - tray drop_left distance (xy)", "held": False,
                                                   "measured": 0.2, "limit": 0.08, "kind": "<", "unit": "m"}])
        elif rec["seed"] == 100001:
            rec.update(success=True, conditions=None)
    (b / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return a, b


def test_compare_shows_rates_paired_seeds_and_the_settings_that_differ(
        two_folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = two_folders
    outcome = {r["seed"]: r["success"] for r in map(json.loads, (a / "episodes.jsonl").read_text().splitlines())}
    first, flipped = outcome[100000], outcome[100001]  # B: seed 100000 the same, seed 100001 the other way
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "randomization: 'original' (A) vs 'none' (B)" in out
    row = next(line for line in out.splitlines() if line.startswith(f"| {TASK} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1].startswith(f"{50 * (first + flipped):.1f} (") and cells[1].endswith("n 2")
    assert cells[2].startswith(f"{50 * (first + (not flipped)):.1f} (") and cells[2].endswith("n 2")
    assert cells[3:8] == ["2", str(int(first)), str(int(flipped)), str(int(not flipped)), str(int(not first))]
    a_says, b_says = ("success", "failure") if flipped else ("failure", "success")
    assert f"- {TASK} seed 100001: A {a_says}, B {b_says} (" in out
    if flipped:
        assert "(B: condition missed: missed: burger - tray drop_left distance (xy))" in out
    assert "seed 100000:" not in out  # the same outcome in both: not listed

    assert main(["compare", str(a), str(b), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    task = data["tasks"][TASK]
    assert task["b"]["episodes"] == 2 and task["paired"]["seeds"] == 2
    assert [d["seed"] for d in task["differing_seeds"]] == [100001]
    assert task["paired"]["mcnemar_p"] == 1.0  # one discordant seed proves nothing
    assert {"setting": "randomization", "a": "original", "b": "none"} in data["settings_differ"]


def test_compare_refuses_a_folder_that_is_not_a_bench_run(two_folders: tuple[Path, Path], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = two_folders
    assert main(["compare", str(a), str(tmp_path)]) == 2
    assert f"{tmp_path} holds no run.json, so it is not a bench output folder" in capsys.readouterr().err
    (tmp_path / "run.json").write_text('{"config": {"tier": "planning", "seed_start": ' + "7" * 5000 + "}}")
    assert main(["compare", str(a), str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'run.json'} line 1: a number of 5000 digits" in err and "Traceback" not in err


def test_tasks_lists_every_tier_with_ids_layouts_and_limits(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    for tier, tasks in TIER_TASKS.items():
        assert f"{tier}:" in out
        for name in tasks:
            assert f"  {name} (" in out
    assert "blocks_ranking_rgb (Rank2): Place the red block, green block, and blue block" in out
    rgb = out.split("blocks_ranking_rgb (Rank2)")[1].splitlines()[1]
    assert "arms 0.6 m apart (left at x -0.30, right at x +0.30" in rgb and "turns 10, chunk 10" in rgb

    assert main(["tasks", "--tier", "fine", "--json"]) == 0
    fine = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in fine] == list(TIER_TASKS["fine"])
    roller = next(t for t in fine if t["name"] == "grab_roller")
    assert roller["paper_id"] == "Grab1" and roller["max_turns"] == 3 and roller["chunk"] == 6
    assert roller["arm_bases_xy_m"]["left"][0] == pytest.approx(-roller["arm_spacing_m"] / 2)

    assert main(["tasks", "--tier", "tier9"]) == 2
    assert "unknown tier 'tier9'" in capsys.readouterr().err
