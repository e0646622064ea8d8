"""Resuming a bench folder counts only the run's own records: a foreign seed, a repeated seed, another agent's or
another tier's episode is named (file and line) and left out, so every seed the run needs runs and its score is
over its own episodes. A hostile line (thousands of digits, thousands of levels deep) or a FIFO in place of a file
is named, never a traceback or a hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.runner import prepare_dir, run_bench
from mallvi.cli import main

TASK = "place_burger_fries"  # cheap for the expert (about 2 s an episode, no rendering)
BENCH = ["bench", "--tier", "planning", "--tasks", TASK, "--agent", "expert", "--no-images", "--quiet"]


def _cfg(episodes: int) -> BenchConfig:
    return BenchConfig(tier="planning", tasks=(TASK,), episodes=episodes, agent="expert", save_images=False)


def _line(**kw: Any) -> str:
    return json.dumps({"task": TASK, "agent": "expert", "tier": "planning", "status": "done", **kw}) + "\n"


def test_resume_counts_only_the_runs_own_records(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    prepare_dir(_cfg(2), tmp_path)
    episodes = tmp_path / "episodes.jsonl"
    episodes.write_text(
        _line(seed=-5, success=True)  # not a seed of this run
        + _line(seed=100000, success=True)  # the run's own
        + _line(seed=100000, success=False)  # a second record of the same seed
        + _line(seed=100001, success=True, agent="single")  # another agent's episode
        + _line(seed=100001, success=True, task="grab_roller", tier="fine")  # another tier's task
        + _line(seed=100001, success="yes")  # not a true/false success
    )
    results = run_bench(_cfg(2), tmp_path, workers=1)
    lines = [json.loads(x) for x in episodes.read_text().splitlines()]
    assert len(lines) == 7  # the foreign lines stay in the file; one episode was run: seed 100001
    new = lines[-1]
    assert (new["seed"], new["agent"], new["task"]) == (100001, "expert", TASK)
    task = results["tasks"][TASK]
    assert task["seeds"] == [100000, 100001] and task["episodes"] == 2
    assert task["successes"] == 1 + int(new["success"])  # seed 100000's first record and the new episode only
    log = caplog.text
    where = f"{episodes} line"
    assert f"{where} 1 has seed -5, below this run's first seed 100000; not counted" in log
    assert f"{where} 3 repeats {TASK} seed 100000 (first at line 2); not counted" in log
    assert f"{where} 4 is an episode of agent 'single', not 'expert'" in log
    assert f"{where} 5 is an episode of tier 'fine', not 'planning'" in log
    assert f"{where} 6 has no true/false success" in log


def test_hostile_lines_in_episodes_are_named_and_their_seeds_run(tmp_path: Path) -> None:
    out = tmp_path / "o"
    prepare_dir(_cfg(2), out)
    (out / "episodes.jsonl").write_bytes(
        b'{"task": "place_burger_fries", "seed": ' + b"9" * 5000 + b', "status": "done", "success": true}\n'
        + b"[" * 10_000 + b"]" * 10_000 + b"\n"
        + b'{"task": "place_burger_fries", "seed": 100000, "status": "done", "success": true, "note": "\xff"}\n'
    )
    r = subprocess.run([sys.executable, "-m", "mallvi.cli", *BENCH, "--episodes", "2", "--workers", "1",
                        "--json", "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    episodes = out / "episodes.jsonl"
    assert f"{episodes} line 1 is not a JSON record (a number of 5000 digits" in r.stderr
    assert f"{episodes} line 2 is not a JSON record (nested deeper than 64 levels)" in r.stderr
    assert f"{episodes} line 3 is not a JSON record (not valid UTF-8" in r.stderr
    assert json.loads(r.stdout)["tasks"][TASK]["seeds"] == [100000, 100001]  # every seed ran afresh


@pytest.mark.parametrize(("body", "reason"), [
    ('{"identity": {"tier": "planning",\n "seed_start": ' + "1" * 5000 + "}}", "a number of 5000 digits"),
    ('{"identity":\n\n' + "[" * 10_000 + "]" * 10_000 + "}", "nested deeper than 64 levels"),
])
def test_a_hostile_run_json_is_named_with_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str,
                                                   reason: str) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "run.json").write_text(body)
    assert main([*BENCH, "--episodes", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    line = 2 if "digits" in reason else 3
    assert f"{out / 'run.json'} is damaged ({reason}" in err and f"at line {line})" in err
    assert "Traceback" not in err and not (out / "episodes.jsonl").exists()


def test_a_fifo_in_place_of_episodes_jsonl_is_refused_at_once(tmp_path: Path) -> None:
    out = tmp_path / "o"
    prepare_dir(_cfg(1), out)
    (out / "episodes.jsonl").unlink()
    os.mkfifo(out / "episodes.jsonl")
    r = subprocess.run([sys.executable, "-m", "mallvi.cli", *BENCH, "--episodes", "1", "--out", str(out)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and f"{out / 'episodes.jsonl'} is not a regular file" in r.stderr
