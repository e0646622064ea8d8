"""``mallvi bench``: run episodes of many tasks in worker processes (or Ray tasks), resumably.

Output directory layout::

    DIR/run.json        the run's settings (a rerun with other settings is refused)
    DIR/episodes.jsonl  one record per finished episode, appended as it finishes (resume skips these)
    DIR/results.json    settings + per-task aggregates (rewritten at the end of every run)
    DIR/table.md        our per-task results beside the paper's
    DIR/traces/<task>/<seed>/   the trace of each episode
"""

from __future__ import annotations

import json
import logging
import multiprocessing as mp
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.episode import preload, run_episode
from mallvi.bench.preflight import check_endpoint, connect_ray, ray_endpoint
from mallvi.bench.report import write_report
from mallvi.bench.run_records import SEED_LIMIT, RecordScope, drop_torn_tail, is_regular_or_missing, own_records
from mallvi.tracing.redaction import redact_value
from mallvi.tracing.tolerant_json import JsonFileError, load_json_file

log = logging.getLogger(__name__)


@dataclass
class Progress:
    """What the progress callback receives after each episode."""

    done: int
    total: int
    successes: int
    last: dict[str, Any]
    elapsed_s: float


@dataclass
class _TaskQueue:
    """Seeds of one task: which are finished, which are running, which comes next."""

    task: str
    needed: int
    next_seed: int
    done: int = 0
    running: set[int] = field(default_factory=set)

    def take(self) -> int | None:
        if self.done + len(self.running) >= self.needed:
            return None
        seed = self.next_seed
        self.next_seed += 1
        self.running.add(seed)
        return seed


class RunDirError(ValueError):
    """The output directory holds a run with different settings."""


#: more episodes per task than this is a typing error (the paper runs 100)
MAX_EPISODES = 100_000


def check_available(cfg: BenchConfig) -> None:
    """Refuse settings this build cannot honour before anything runs."""
    if cfg.episodes > MAX_EPISODES:
        raise ValueError(f"--episodes must be at most {MAX_EPISODES:,} per task, got {cfg.episodes:,}")
    # skipped (unbuildable) seeds are replaced by later ones, so leave room above the last seed
    if cfg.seed_start + 2 * cfg.episodes > SEED_LIMIT:
        raise ValueError(f"--seed-start {cfg.seed_start} with {cfg.episodes} episodes runs past the largest seed, "
                         f"{SEED_LIMIT - 1}; choose a --seed-start below {SEED_LIMIT - 2 * cfg.episodes}")
    if cfg.station == "twin":  # the calibration, loaded once: usable, and serving every task asked for
        from mallvi.bench.twin_layouts import check_twin_calibration

        check_twin_calibration(cfg)
    if cfg.agent == "expert":
        from mallvi.bench.agents.expert import SCRIPTS

        missing = [t for t in cfg.tasks if t not in SCRIPTS and not t.startswith("grounding_")]
        if missing:
            raise ValueError(f"the expert has no script for {', '.join(missing)}")


def scope_of(cfg: BenchConfig) -> RecordScope:
    """What the run's own episode records look like (``run_records.own_records``)."""
    return RecordScope(cfg.tier, cfg.tasks, cfg.agent, cfg.seed_start)


def same_run(old: Any, new: dict[str, Any]) -> bool:
    """Whether a folder's stored identity is this run's: equal, where a folder written before the models were part
    of the identity matches on everything else."""
    if not isinstance(old, dict):
        return False
    if "models" not in old:
        new = {k: v for k, v in new.items() if k != "models"}
    return old == new


def prepare_dir(cfg: BenchConfig, out_dir: Path) -> list[dict[str, Any]]:
    """Create or reopen DIR; returns the run's own records already there (a torn last record is dropped from the
    file; records that are not the run's own are warned about and not counted, see ``run_records.own_records``).

    Raises:
        RunDirError: DIR holds a run with other settings, its run.json is unreadable, or DIR cannot be written.
    """
    run_json = out_dir / "run.json"
    episodes = out_dir / "episodes.jsonl"
    try:
        for path in (run_json, episodes):
            if not is_regular_or_missing(path):  # a FIFO would block the bench forever
                raise RunDirError(f"{path} is not a regular file; use another --out directory")
        if run_json.exists():
            try:
                old = load_json_file(run_json)
            except JsonFileError as e:
                raise RunDirError(f"{run_json} is damaged ({e.reason}"
                                  f"{'' if e.line is None else f' at line {e.line}'}); repair it or use another "
                                  "--out directory") from None
            if not same_run(old.get("identity") if isinstance(old, dict) else old, cfg.identity()):
                identity = old.get("identity") if isinstance(old, dict) else old
                raise RunDirError(f"{out_dir} holds a run with other settings ({identity}); "
                                  "use another --out directory")
        else:
            out_dir.mkdir(parents=True, exist_ok=True)
            run_json.write_text(json.dumps({"identity": cfg.identity(), "config": cfg.to_json()}, indent=2) + "\n")
        drop_torn_tail(episodes)
        with open(episodes, "a", encoding="utf-8"):  # fails now, not after the first episode, if unwritable
            pass
        return own_records(episodes, scope_of(cfg))
    except OSError as e:
        raise RunDirError(f"cannot use {out_dir} as the output folder: {e.strerror or e}") from e


def _queues(cfg: BenchConfig, records: list[dict[str, Any]]) -> dict[str, _TaskQueue]:
    seen: dict[str, dict[int, dict[str, Any]]] = {}
    for r in records:
        seen.setdefault(r["task"], {})[int(r["seed"])] = r
    queues = {}
    for task in cfg.tasks:
        q = _TaskQueue(task, cfg.episodes, cfg.seed_start)
        got = seen.get(task, {})
        while q.next_seed in got:  # finished seeds (done or skipped) are not run again
            if got[q.next_seed].get("status") != "skipped":
                q.done += 1
            q.next_seed += 1
        queues[task] = q
    return queues


def _jobs(queues: dict[str, _TaskQueue], finished: dict[str, dict[int, bool]]) -> Iterator[tuple[str, int]]:
    """Next (task, seed) pairs to start, round-robin over tasks; skips seeds finished in an earlier run.

    ``finished[task][seed]`` is True for a counted episode, False for a skipped (unbuildable) seed.
    """
    progressed = True
    while progressed:
        progressed = False
        for q in queues.values():
            seed = q.take()
            while seed is not None and seed in finished.get(q.task, {}):
                q.running.discard(seed)
                q.done += int(finished[q.task][seed])
                seed = q.take()
            if seed is not None:
                progressed = True
                yield q.task, seed


def _cpu_jiffies(cpus: set[int]) -> tuple[int, int] | None:
    """(all, idle + iowait) jiffies summed over ``cpus``, from ``/proc/stat``; None where it cannot be read."""
    total = idle = 0
    try:
        with open("/proc/stat", encoding="ascii") as f:
            for line in f:
                name, *values = line.split()
                if not name.startswith("cpu") or name == "cpu" or int(name[3:]) not in cpus:
                    continue
                fields = [int(v) for v in values[:8]]  # guest time is inside user: not added twice
                total += sum(fields)
                idle += fields[3] + fields[4]
    except (OSError, ValueError, IndexError):
        return None
    return (total, idle) if total else None


def busy_cores(cpus: set[int], window_s: float = 0.25) -> float | None:
    """How many of ``cpus`` other work keeps busy, sampled over the next ``window_s`` seconds (Linux).

    None where ``/proc/stat`` cannot be read. Sampled now rather than averaged over the last minute, so a bench
    started right after another one (or after a build) does not count that finished work as load.
    """
    first = _cpu_jiffies(cpus)
    time.sleep(window_s)
    second = _cpu_jiffies(cpus)
    if first is None or second is None or second[0] <= first[0]:
        return None
    busy_share = 1.0 - (second[1] - first[1]) / (second[0] - first[0])
    return max(0.0, min(1.0, busy_share)) * len(cpus)


def default_workers() -> int:
    """``--workers``' default: one worker per free core, at least one.

    Free cores are the cores this process may use minus the cores other work keeps busy now (``busy_cores``, a
    quarter-second sample; the last minute's load average where that cannot be read), rounded. Measured on a
    2-core machine (docs/benchmark.md, "Cost profile"): while other jobs kept the load average at 8–12, one
    worker was as fast as two or faster and spent less CPU per episode; on a quiet machine two were faster.
    """
    try:
        cpus = set(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = set(range(os.cpu_count() or 1))
    cores = len(cpus)
    busy = busy_cores(cpus)
    if busy is None:
        try:
            busy = os.getloadavg()[0]
        except OSError:  # the load is unknown: count every core as free
            busy = 0.0
    return max(1, min(cores, int(cores - busy + 0.5)))


def run_bench(
    cfg: BenchConfig,
    out_dir: str | Path,
    workers: int | None = None,
    ray_address: str | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> dict[str, Any]:
    """Run (or resume) a benchmark; returns the results.json content.

    ``workers`` defaults to ``default_workers()`` (on a Ray cluster: the cluster's CPUs); no more local workers
    start than there are episodes to run. Before anything is written: the settings are checked (ValueError), the
    model endpoint is asked once (``preflight.check_endpoint``: ``ServiceUnavailableError`` when it does not answer,
    ``UnusableModelError`` when an agent that reads images would ask a text-only model) and the Ray cluster is
    connected (``preflight.connect_ray``: ValueError for a malformed address, ``ServiceUnavailableError`` when it
    does not answer).
    """
    if workers is None and not ray_address:
        workers = default_workers()
    if workers is not None and workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")
    check_available(cfg)
    if ray_address:
        ray_endpoint(ray_address)  # its form first: a typing error costs no endpoint question
    endpoint = check_endpoint(cfg)
    if ray_address:
        connect_ray(ray_address)  # workers stays None here: _run_ray takes the cluster's CPUs
    out = Path(out_dir)
    records = prepare_dir(cfg, out)
    queues = _queues(cfg, records)
    finished = {t: {int(r["seed"]): r.get("status") != "skipped" for r in records if r["task"] == t} for t in cfg.tasks}
    total = cfg.episodes * len(cfg.tasks)
    state = {"done": sum(q.done for q in queues.values()), "wins": _wins(records, cfg.tasks)}
    if workers is not None and not ray_address:
        workers = min(workers, max(1, total - state["done"]))  # an idle worker would only pay its start-up
    t0 = time.perf_counter()
    ran: list[dict[str, Any]] = []

    def finish(rec: dict[str, Any]) -> None:
        rec = redact_value(rec, default=str)  # a model's text may echo the API key: never written
        q = queues[rec["task"]]
        q.running.discard(int(rec["seed"]))
        if rec.get("status") != "skipped":
            q.done += 1
            state["done"] += 1
            state["wins"] += int(bool(rec.get("success")))
        with open(out / "episodes.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec, default=str) + "\n")
            fh.flush()
        ran.append(rec)
        if on_progress is not None:
            on_progress(Progress(state["done"], total, state["wins"], rec, time.perf_counter() - t0))

    if ray_address:
        workers = _run_ray(cfg, out, queues, finished, finish, ray_address, workers)
    elif workers is None or workers == 1:
        for task, seed in _drain(queues, finished):
            finish(run_episode(cfg, task, seed, out))
    else:
        _run_pool(cfg, out, queues, finished, finish, workers)
    wall_s = time.perf_counter() - t0
    all_records = own_records(out / "episodes.jsonl", scope_of(cfg))
    return write_report(cfg, out, all_records, run_stats={"wall_s": wall_s, "episodes_run": len(ran),
                                                          "workers": workers, "ray_address": ray_address,
                                                          "endpoint": None if endpoint is None else {
                                                              "host": endpoint.endpoint,
                                                              "vision": endpoint.vision}})  # fmt: skip


def _wins(records: list[dict[str, Any]], tasks: tuple[str, ...]) -> int:
    return sum(1 for r in records if r["task"] in tasks and r.get("status") != "skipped" and r.get("success"))


def _drain(queues: dict[str, _TaskQueue], finished: dict[str, dict[int, bool]]) -> Iterator[tuple[str, int]]:
    """Sequential order, one job at a time: keep asking for work until every queue is satisfied (a skipped seed
    opens a slot for the next one). Nothing is listed ahead, so a huge ``--episodes`` costs no memory."""
    while True:
        started = False
        for job in _jobs(queues, finished):
            started = True
            yield job
        if not started:
            return


def _run_pool(
    cfg: BenchConfig,
    out: Path,
    queues: dict[str, _TaskQueue],
    finished: dict[str, dict[int, bool]],
    finish: Callable[[dict[str, Any]], None],
    workers: int,
) -> None:
    """``workers - 1`` started processes and this one run episodes side by side (one process start-up fewer than
    ``workers`` started ones). Two episodes wait in line for each started process, so it does not sit idle while
    this one is busy with an episode of its own. The pool starts before this process runs an episode of its own
    (see ``pool_context``)."""
    preload(cfg)  # this process would import them with its first episode; a forked worker inherits them
    ctx = pool_context()
    # inside the one-thread settings: this process's renderer starts with its first episode, so it gets them too
    with _single_threaded_children(), ProcessPoolExecutor(max_workers=workers - 1, mp_context=ctx) as pool, \
            _cancel_on_error(pool):
        pending: set[Future[dict[str, Any]]] = set()
        jobs = _jobs(queues, finished)

        def take() -> tuple[str, int] | None:
            nonlocal jobs
            nxt = next(jobs, None)
            if nxt is None:
                jobs = _jobs(queues, finished)  # a skipped seed may have opened a slot
                nxt = next(jobs, None)
            return nxt

        def collect(block: bool) -> None:
            done = wait(pending, return_when=FIRST_COMPLETED)[0] if block else {f for f in pending if f.done()}
            for fut in done:
                pending.discard(fut)
                finish(fut.result())

        def fill() -> None:
            while len(pending) < 2 * (workers - 1):
                nxt = take()
                if nxt is None:
                    return
                pending.add(pool.submit(run_episode, cfg, nxt[0], nxt[1], out))

        while True:
            collect(block=False)
            fill()
            own = take()
            if own is not None:
                finish(run_episode(cfg, own[0], own[1], out))
            elif pending:
                collect(block=True)
            else:
                return


@contextmanager
def _cancel_on_error(pool: ProcessPoolExecutor) -> Iterator[None]:
    """An episode that raised (a station the run cannot use) ends the run: queued episodes are not started, the
    running ones end before the error goes on."""
    try:
        yield
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise


def pool_context() -> mp.context.BaseContext:
    """How worker processes start: forked while this process runs no other thread, else spawned.

    A forked worker starts with every module this process has imported (LangGraph, LangChain, the simulator and
    the planner: the imports a spawned worker pays again) and with nothing of a simulator or renderer, as the
    pool starts before this process builds its first world. A second thread (a caller's, or one a library
    started) could hold a lock at the fork that the worker would then wait on forever, so then workers spawn.
    """
    if threading.active_count() == 1 and "fork" in mp.get_all_start_methods():
        return mp.get_context("fork")
    return mp.get_context("spawn")


#: thread pools of numpy/BLAS, torch and Mesa's lavapipe; one thread per worker avoids oversubscribing the cores
_THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "LP_NUM_THREADS")


@contextmanager
def _single_threaded_children() -> Iterator[None]:
    """Worker processes started inside inherit one-thread settings (unless the user set them)."""
    saved = {k: os.environ.get(k) for k in _THREAD_ENV}
    for k in _THREAD_ENV:
        os.environ.setdefault(k, "1")
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _run_ray(
    cfg: BenchConfig,
    out: Path,
    queues: dict[str, _TaskQueue],
    finished: dict[str, dict[int, bool]],
    finish: Callable[[dict[str, Any]], None],
    address: str,
    max_in_flight: int | None,
) -> int:
    """Episodes as Ray tasks on a cluster; records come back to this process, which alone writes the files.

    ``max_in_flight`` (``--workers``) defaults to the cluster's CPUs, not this machine's; returns the number used.
    Traces are written by the Ray workers under ``out``, so ``out`` must be on storage every node shares.
    """
    import ray

    ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    if max_in_flight is None:
        max_in_flight = cluster_cpus(ray.cluster_resources())
    remote = ray.remote(run_episode)
    pending: dict[Any, tuple[str, int]] = {}
    jobs = _jobs(queues, finished)
    while True:
        while len(pending) < max_in_flight:
            nxt = next(jobs, None)
            if nxt is None:
                jobs = _jobs(queues, finished)
                nxt = next(jobs, None)
                if nxt is None:
                    break
            pending[remote.remote(cfg, nxt[0], nxt[1], str(out))] = nxt
        if not pending:
            return max_in_flight
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            pending.pop(ref)
            finish(ray.get(ref))


def cluster_cpus(resources: dict[str, Any]) -> int:
    """The whole CPUs a Ray cluster offers (``ray.cluster_resources()``), at least one."""
    cpus = resources.get("CPU")
    return max(1, int(cpus)) if isinstance(cpus, int | float) and not isinstance(cpus, bool) else 1
