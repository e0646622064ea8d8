"""mallvi bench on bad input and damaged output folders: clear refusals (exit 2) and resumes that go on."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.run_records import read_records
from mallvi.bench.runner import RunDirError, _drain, _queues, prepare_dir, run_bench
from mallvi.cli import main

TASK = "place_burger_fries"  # cheap for the expert (about 2 s an episode, no rendering)
BENCH = ["bench", "--tier", "planning", "--tasks", TASK, "--agent", "expert", "--no-images", "--quiet"]


def _cfg(episodes: int, seed_start: int = 100000) -> BenchConfig:
    return BenchConfig(tier="planning", tasks=(TASK,), episodes=episodes, agent="expert", save_images=False,
                       seed_start=seed_start)


def test_an_absurd_episode_count_is_refused_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t0 = time.perf_counter()
    assert main([*BENCH, "--episodes", "1000000000", "--out", str(tmp_path / "o")]) == 2
    assert time.perf_counter() - t0 < 10
    assert "--episodes must be at most 100,000 per task" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_jobs_are_made_one_at_a_time(tmp_path: Path) -> None:
    cfg = _cfg(100_000)
    queues = _queues(cfg, [])
    jobs = _drain(queues, {TASK: {}})
    assert next(jobs) == (TASK, 100000)
    assert len(queues[TASK].running) == 1  # not a hundred thousand seeds taken before the first episode runs


@pytest.mark.parametrize("seed_start", ["4294967296", "4294967290"])
def test_seeds_past_32_bits_are_bad_input(tmp_path: Path, seed_start: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BENCH, "--episodes", "5", "--seed-start", seed_start, "--out", str(tmp_path / "o")]) == 2
    assert "past the largest seed, 4294967295" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_an_out_folder_that_is_a_file_or_under_one_is_bad_input(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "results.txt"
    a_file.write_text("not a folder")
    for out in (a_file, a_file / "sub"):
        assert main([*BENCH, "--episodes", "1", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"cannot use {out} as the output folder" in err and "Traceback" not in err
    assert a_file.read_text() == "not a folder"


def test_a_damaged_run_json_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "run.json").write_text('{"identity": {"tier": "plann')
    assert main([*BENCH, "--episodes", "1", "--out", str(out)]) == 2
    assert f"{out / 'run.json'} is damaged" in capsys.readouterr().err


def test_a_torn_last_record_is_dropped_and_the_run_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "o"
    run_bench(_cfg(2), out)
    episodes = out / "episodes.jsonl"
    full = episodes.read_text().splitlines()
    # a kill while the third record was being written left half of it
    episodes.write_text(full[0] + "\n" + full[1] + "\n" + full[1][: len(full[1]) // 2])
    run_bench(_cfg(3), out)
    lines = episodes.read_text().splitlines()
    records = [json.loads(line) for line in lines]  # every line is a whole record again
    assert lines[:2] == full
    assert sorted(r["seed"] for r in records) == [100000, 100001, 100002]
    again = run_bench(_cfg(3), out)  # and a later rerun resumes without complaint
    assert again["tasks"][TASK]["episodes"] == 3
    assert len(read_records(episodes)) == 3


def test_a_damaged_middle_record_is_skipped_by_name(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    prepare_dir(_cfg(2), tmp_path)
    good = {"task": TASK, "seed": 100000, "status": "done", "success": True}
    other = {**good, "seed": 100001}
    (tmp_path / "episodes.jsonl").write_text(json.dumps(good) + '\n{"task": "pl\n' + json.dumps(other) + "\n")
    with pytest.raises(RunDirError):
        prepare_dir(_cfg(2, seed_start=7), tmp_path)
    assert len(prepare_dir(_cfg(2), tmp_path)) == 2
    assert f"{tmp_path / 'episodes.jsonl'} line 2 is not a JSON record" in caplog.text
