"""Figures for contingencies: success of mallvi (rules backend) with and without the Reflector at each level.

Usage: .venv/bin/python scripts/fault_figures.py [--seeds 20] [--workers 2] [--levels easy,medium,hard]
       [--tasks stack_blocks_two,...] [--variants mallvi,no-reflector] [--out figures/faults] [--report-only]

Each run is `mallvi run --task TASK --seed S --contingency LEVEL [--no-reflector]` without an instruction, so the
scene's own instruction is used and success is the benchmark's success check on the simulator's final state
(simulator truth). Rows are written as they finish to DIR/fault_runs.jsonl (a rerun skips rows already there),
and the table to DIR/fault_figures.md and .json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

TASKS = ["stack_blocks_two", "stack_blocks_three", "blocks_ranking_rgb", "handover_block"]
Job = tuple[str, int, str, str]


def _run(job: Job) -> dict[str, Any]:
    from mallvi.bench.task_scenes import scene_catalog
    from mallvi.config import RunConfig
    from mallvi.orchestration.run_instruction import run
    from mallvi.orchestration.stations import RunRequest

    task, seed, level, variant = job
    cfg = RunConfig(perception="color", reflector=variant == "mallvi", contingency=level)
    t0 = time.perf_counter()
    row: dict[str, Any] = {"task": task, "seed": seed, "level": level, "variant": variant}
    try:
        r = run(RunRequest(instruction=None, task=task, seed=seed), cfg, catalog=scene_catalog())
    except Exception as e:  # a crash is a data point, not the end of the measurement
        return {**row, "success": False, "graph_success": False, "status": f"crash: {type(e).__name__}: {e}",
                "wall_s": time.perf_counter() - t0, "faults": 0, "failed_attempts": 0}
    return {**row, "success": r.success, "graph_success": r.graph_success, "status": r.status,
            "wall_s": round(r.wall_s, 2), "faults": r.faults_injected,
            "failed_attempts": sum(r.attempts.values()),
            "failure": ((r.failure_report or {}).get("reason") or r.refusal or "")[:600],
            "tried": [t[:160] for t in (r.failure_report or {}).get("tried", [])][-20:]}  # the last ones


def _done(path: Path) -> Iterator[dict[str, Any]]:
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                yield json.loads(line)


def table(rows: list[dict[str, Any]], tasks: list[str], levels: list[str], variants: list[str]) -> list[str]:
    """Markdown lines: per task, success k/n per level and variant, medium/easy ratio and the Reflector's gap."""
    def rate(task: str, level: str, variant: str) -> tuple[int, int]:
        rs = [r for r in rows if r["task"] == task and r["level"] == level and r["variant"] == variant]
        return sum(bool(r["success"]) for r in rs), len(rs)

    head = ["task"] + [f"{v} {lv}" for v in variants for lv in levels]
    lines = ["| " + " | ".join([*head, "medium / easy (mallvi)", "gap mallvi - no-reflector per level"]) + " |",
             "|" + "---|" * (len(head) + 2)]
    for task in tasks:
        cells = [task]
        for v in variants:
            for lv in levels:
                k, n = rate(task, lv, v)
                cells.append(f"{k}/{n}" if n else "-")
        ke, ne = rate(task, "easy", "mallvi")
        km, nm = rate(task, "medium", "mallvi")
        ratio = f"{(km / nm) / (ke / ne):.2f}" if ne and nm and ke else "-"
        gaps = []
        for lv in levels:
            a, na = rate(task, lv, "mallvi")
            b, nb = rate(task, lv, "no-reflector")
            gaps.append(f"{lv} {100 * (a / na - b / nb):+.0f} pp" if na and nb else f"{lv} -")
        cells += [ratio, ", ".join(gaps)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def failures(rows: list[dict[str, Any]], tasks: list[str], levels: list[str]) -> list[str]:
    """Markdown lines on the full graph's failed runs: mean failed attempts per failed run, hard goals, causes."""
    lines = ["| task | level | failed runs | mean failed attempts per failed run | how the failed runs ended |",
             "|---|---|---|---|---|"]
    for task in tasks:
        for lv in levels:
            bad = [r for r in rows if r["task"] == task and r["level"] == lv and r["variant"] == "mallvi"
                   and not r["success"]]
            if not bad:
                continue
            mean = sum(r["failed_attempts"] for r in bad) / len(bad)
            ends: dict[str, int] = {}
            for r in bad:
                ends[_ending(r)] = ends.get(_ending(r), 0) + 1
            causes = ", ".join(f"{k} {v}" for k, v in sorted(ends.items(), key=lambda kv: -kv[1]))
            lines.append(f"| {task} | {lv} | {len(bad)} | {mean:.1f} | {causes} |")
    return lines


def _ending(r: dict[str, Any]) -> str:
    """A short class of how a failed run ended, from its failure report's reason."""
    why = str(r.get("failure") or r.get("status") or "")
    if why.startswith("no different strategy remains"):
        return "no strategy left"
    if why.startswith("object lost from view"):
        return "object lost"
    if "budget exhausted" in why:
        return "budget spent"
    if r.get("graph_success"):
        return "graph believed success"
    if r.get("status") == "succeeded":
        return "graph done, check failed"
    return why.split(":")[0][:40] or "other"


def walls(rows: list[dict[str, Any]], levels: list[str]) -> list[str]:
    """Markdown lines: per level, the full graph's mean and longest wall time per run and the mean attempts spent,
    with the mean as a ratio to ``easy`` (taken in the same run, so the machine's load cancels out)."""
    def of(level: str) -> list[dict[str, Any]]:
        return [r for r in rows if r["level"] == level and r["variant"] == "mallvi"]

    easy = of("easy")
    base = sum(r["wall_s"] for r in easy) / len(easy) if easy else None
    lines = ["| level | runs | mean wall per run (s) | longest (s) | mean / easy | mean failed attempts per run |",
             "|---|---|---|---|---|---|"]
    for lv in levels:
        rs = of(lv)
        if not rs:
            continue
        mean = sum(r["wall_s"] for r in rs) / len(rs)
        ratio = f"{mean / base:.1f}" if base else "-"
        att = sum(r["failed_attempts"] for r in rs) / len(rs)
        lines.append(f"| {lv} | {len(rs)} | {mean:.0f} | {max(r['wall_s'] for r in rs):.0f} | {ratio} | {att:.1f} |")
    return lines


def ratios(rows: list[dict[str, Any]], tasks: list[str]) -> list[str]:
    """Markdown lines: medium / easy and hard / easy of the full graph per task, against the goals 0.8 and 0.5."""
    def rate(task: str, level: str) -> float | None:
        rs = [r for r in rows if r["task"] == task and r["level"] == level and r["variant"] == "mallvi"]
        return sum(bool(r["success"]) for r in rs) / len(rs) if rs else None

    lines = ["| task | medium / easy (goal >= 0.8) | hard / easy (goal >= 0.5) |", "|---|---|---|"]
    for task in tasks:
        e, m, h = rate(task, "easy"), rate(task, "medium"), rate(task, "hard")
        med = f"{m / e:.2f}" if e and m is not None else "-"
        hard = f"{h / e:.2f}" if e and h is not None else "-"
        lines.append(f"| {task} | {med} | {hard} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--seed-start", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--levels", default="easy,medium,hard")
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--variants", default="mallvi,no-reflector")
    ap.add_argument("--out", default="figures/faults")
    ap.add_argument("--report-only", action="store_true", help="only tabulate the runs already in DIR")
    args = ap.parse_args(argv)
    levels, tasks, variants = args.levels.split(","), args.tasks.split(","), args.variants.split(",")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = out / "fault_runs.jsonl"
    rows = list(_done(runs))
    have = {(r["task"], r["seed"], r["level"], r["variant"]) for r in rows}
    # seed by seed, so that a run stopped early has the same seeds in every cell of the table
    jobs: list[Job] = [(t, s, lv, v) for s in range(args.seed_start, args.seed_start + args.seeds)
                       for v in variants for lv in levels for t in tasks if (t, s, lv, v) not in have]
    if args.report_only:
        jobs = []
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool, runs.open("a") as f:
        futures = [pool.submit(_run, j) for j in jobs]
        for fut in as_completed(futures):
            row = fut.result()
            rows.append(row)
            f.write(json.dumps(row) + "\n")
            f.flush()
    total_s = time.perf_counter() - t0
    seeds = set(range(args.seed_start, args.seed_start + args.seeds))
    rows = [r for r in rows if r["seed"] in seeds and r["level"] in levels and r["variant"] in variants]
    lines = [f"# Success under contingencies (rules backend, colour perception, simulator truth), seeds "
             f"{args.seed_start}..{args.seed_start + args.seeds - 1}", ""]
    lines += table(rows, tasks, levels, variants)
    lines += ["", *ratios(rows, tasks), "", "Failed runs of the full graph:", "", *failures(rows, tasks, levels)]
    lines += ["", "Wall time per run of the full graph (this measurement, its workers sharing the machine):", "",
              *walls(rows, levels)]
    lines += ["", f"{len(jobs)} new runs in {total_s:.0f} s with {args.workers} worker(s); "
                  f"mean wall per run {sum(r['wall_s'] for r in rows) / max(1, len(rows)):.1f} s"]
    (out / "fault_figures.md").write_text("\n".join(lines) + "\n")
    (out / "fault_figures.json").write_text(json.dumps(rows, indent=1))
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
