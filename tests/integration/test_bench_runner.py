"""mallvi bench's runner: determinism across worker counts, kill-and-resume, skipped seeds, bad input."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mallvi.bench import runner
from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.run_records import read_records
from mallvi.bench.runner import RunDirError, _jobs, _queues, default_workers, prepare_dir, run_bench

TASK = "place_burger_fries"  # cheap for the expert (about 2 s an episode, no rendering)


def _cfg(episodes: int) -> BenchConfig:
    return BenchConfig(tier="planning", tasks=(TASK,), episodes=episodes, agent="expert", save_images=False)


def _per_seed(out: Path) -> dict[int, tuple[object, ...]]:
    return {
        int(r["seed"]): (r["status"], r["success"], r["actions"], r["failed_actions"], json.dumps(r["final_xyz"]))
        for r in read_records(out / "episodes.jsonl")
    }


def test_two_workers_give_the_same_per_seed_results_as_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one = run_bench(_cfg(3), tmp_path / "one", workers=1)
    # spawned workers here (this test process may run other threads); forked ones from the CLI below
    monkeypatch.setattr(runner, "pool_context", lambda: mp.get_context("spawn"))
    two = run_bench(_cfg(3), tmp_path / "two", workers=2)
    cmd = [sys.executable, "-m", "mallvi.cli", "bench", "--tier", "planning", "--tasks", TASK, "--agent", "expert",
           "--no-images", "--episodes", "3", "--workers", "2", "--out", str(tmp_path / "forked")]  # fmt: skip
    forked = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert forked.returncode == 0, forked.stderr[-2000:]
    assert _per_seed(tmp_path / "one") == _per_seed(tmp_path / "two") == _per_seed(tmp_path / "forked")
    assert one["tasks"][TASK]["seeds"] == two["tasks"][TASK]["seeds"] == [100000, 100001, 100002]
    assert one["tasks"][TASK]["success_rate"] == two["tasks"][TASK]["success_rate"]
    table = (tmp_path / "two" / "table.md").read_text()
    assert "| place_burger_fries | Place3 |" in table and "GPT-5" in table
    assert two["tasks"][TASK]["paper"]["GPT-5"] == 90.0  # the paper's number rides along for viewers


def test_workers_fork_only_while_the_bench_process_runs_one_thread() -> None:
    probe = "from mallvi.bench.runner import pool_context; print(pool_context().get_start_method())"
    alone = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert alone.stdout.strip() == "fork"  # the worker inherits the imports
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert runner.pool_context().get_start_method() == "spawn"  # a fork could inherit a held lock
    finally:
        stop.set()
        other.join()


def test_the_default_worker_count_follows_the_free_cores_and_the_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert 1 <= default_workers() <= len(os.sched_getaffinity(0))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})
    for busy, want in ((0.0, 3), (0.4, 3), (1.0, 2), (2.7, 1), (3.0, 1)):  # a worker per free core, at least one
        monkeypatch.setattr(runner, "busy_cores", lambda cpus, busy=busy: busy)
        assert default_workers() == want, busy
    monkeypatch.setattr(runner, "busy_cores", lambda cpus: None)  # no /proc/stat: the load average decides
    for load, want in ((0.0, 3), (1.0, 2), (10.0, 1)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert default_workers() == want, load
    one = run_bench(_cfg(1), tmp_path / "one")  # one episode: no second worker only to pay a start-up
    assert one["run"]["workers"] == 1 and one["tasks"][TASK]["episodes"] == 1


def test_busy_cores_sees_a_process_spinning_on_a_core() -> None:
    cpu = min(os.sched_getaffinity(0))
    code = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"
    spin = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.3)  # the interpreter's start-up is over
        busy = runner.busy_cores({cpu}, window_s=0.5)
    finally:
        spin.kill()
        spin.wait()
    assert busy is not None and 0.5 <= busy <= 1.0  # the spinner's core reads (mostly) busy, never over one core
    assert runner.busy_cores({10_000}) is None  # a core this machine does not have: nothing to read


def test_a_killed_run_resumes_without_repeating_finished_episodes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # one worker: its records come one episode apart (with two, the bench's process writes a forked worker's
    # records after its own episode, several at once, and may finish all four between two looks)
    cmd = [sys.executable, "-m", "mallvi.cli", "bench", "--tier", "planning", "--tasks", TASK, "--episodes", "4",
           "--agent", "expert", "--no-images", "--quiet", "--workers", "1", "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    episodes = out / "episodes.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(read_records(episodes)) < 2 and proc.poll() is None:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = episodes.read_text().splitlines()
    assert 2 <= len(before) < 4, "the run should have been killed midway"
    assert not (out / "results.json").exists()

    done = subprocess.run([*cmd, "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tasks"][TASK]["episodes"] == 4  # stdout is only the JSON
    after = episodes.read_text().splitlines()
    assert after[: len(before)] == before  # finished episodes were kept, not rerun
    seeds = [json.loads(line)["seed"] for line in after]
    assert sorted(seeds) == [100000, 100001, 100002, 100003]  # each seed exactly once
    results = json.loads((out / "results.json").read_text())
    assert results["tasks"][TASK]["episodes"] == 4


def test_skipped_seeds_are_replaced_by_the_next_ones(tmp_path: Path) -> None:
    cfg = _cfg(3)
    prepare_dir(cfg, tmp_path)
    records = [
        {"task": TASK, "seed": 100000, "status": "done", "success": True},
        {"task": TASK, "seed": 100001, "status": "skipped"},
        {"task": TASK, "seed": 100003, "status": "done", "success": False},
    ]
    queues = _queues(cfg, records)
    finished = {TASK: {100000: True, 100001: False, 100003: True}}
    started = list(_jobs(queues, finished))
    assert started == [(TASK, 100002)]  # 100003 is already done, so one more seed completes the three


def test_a_run_directory_with_other_settings_is_refused(tmp_path: Path) -> None:
    prepare_dir(_cfg(2), tmp_path)
    other = BenchConfig(tier="planning", tasks=(TASK,), episodes=2, agent="expert", seed_start=5)
    with pytest.raises(RunDirError, match="other settings"):
        prepare_dir(other, tmp_path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tier", "planning", "--tasks", "grab_roller"], "not in tier"),
        (["--tier", "tier9"], "unknown tier"),
        (["--tier", "fine", "--episodes", "0"], "at least 1"),
        (["--tier", "fine", "--agent", "single"], "base-url"),
        (["--tier", "fine", "--workers", "0"], "at least 1"),
    ],
)
def test_bad_input_exits_2_and_runs_nothing(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "never"
    env = {k: v for k, v in os.environ.items() if k != "MALLVI_BASE_URL"}
    r = subprocess.run([sys.executable, "-m", "mallvi.cli", "bench", *args, "--out", str(out)], capture_output=True,
                       text=True, timeout=60, env=env)  # fmt: skip
    assert r.returncode == 2
    assert message in r.stderr
    assert not out.exists()


@pytest.mark.slow
def test_ray_tasks_give_the_same_results_as_local_workers(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        address = ray.get_runtime_context().gcs_address
        via_ray = run_bench(_cfg(2), tmp_path / "ray", workers=2, ray_address=address)
    finally:
        ray.shutdown()
    local = run_bench(_cfg(2), tmp_path / "local", workers=1)
    assert local["tasks"][TASK]["success_rate"] == via_ray["tasks"][TASK]["success_rate"]
    assert via_ray["tasks"][TASK]["seeds"] == [100000, 100001]
    assert _per_seed(tmp_path / "ray") == _per_seed(tmp_path / "local")
