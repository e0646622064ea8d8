"""The benchmark's cost, settings side by side: episodes per minute, wall split, sim-time speed-up, success per seed.

Runs ``mallvi bench`` (the mallvi agent, rules backend, colour perception) on the same seeds of
stack_blocks_two (Tier 3) and blocks_ranking_rgb (Tier 2) once per setting, each setting in fresh processes as a
user would run it (so each pays the renderer's start-up), the settings interleaved round by round in a rotating
order because the machine is shared. Prints one table and writes DIR/cost.json; exits 1 when a seed's success
differs between settings (the settings must not change results).

    scripts/bench_cost.py --out runs/cost --seed-start 300000 --seeds 10 --rounds 2 --settings \\
        "reuse:w1,reuse:w2,no-reuse:w1,no-reuse:w2"

A setting is ``reuse|no-reuse`` : ``w<workers>`` (``w0`` = the bench's default).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TASKS = (("fine", "stack_blocks_two"), ("planning", "blocks_ranking_rgb"))


def run_setting(setting: str, out: Path, seed_start: int, seeds: int) -> dict[str, Any]:
    """One setting over both tasks, each task one ``mallvi bench`` process; wall includes the start-up."""
    reuse, workers = setting.split(":")
    records: list[dict[str, Any]] = []
    wall = 0.0
    for tier, task in TASKS:
        cmd = [sys.executable, "-m", "mallvi.cli", "bench", "--tier", tier, "--tasks", task, "--episodes", str(seeds),
               "--seed-start", str(seed_start), "--out", str(out / task), "--quiet", "--json"]  # fmt: skip
        if workers != "w0":
            cmd += ["--workers", workers[1:]]
        if reuse == "no-reuse":
            cmd.append("--no-reuse")
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall += time.perf_counter() - t0
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{setting} {task}: mallvi bench failed ({proc.returncode}): {proc.stderr[-2000:]}")
        with open(out / task / "episodes.jsonl", encoding="utf-8") as fh:
            records += [json.loads(line) for line in fh if line.strip()]
    counted = [r for r in records if r.get("status") != "skipped"]
    costs = [r["cost"] for r in counted if r.get("cost")]
    keys = ("wall_s", "sim_s", "cpu_s", "setup_s", "render_s", "physics_s", "planning_s", "perception_s", "graph_s")
    tot = {k: sum(float(c[k]) for c in costs) for k in keys}
    return {
        "setting": setting,
        "episodes": len(counted),
        "process_wall_s": wall,
        "episodes_per_minute": 60.0 * len(counted) / wall,
        "episodes_per_core_minute": 60.0 * len(costs) / tot["cpu_s"] if tot["cpu_s"] else None,
        "totals": tot,
        "success": {f"{r['task']}/{r['seed']}": bool(r.get("success")) for r in counted},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--seed-start", type=int, default=300000)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--settings", default="no-reuse:w1,no-reuse:w2,reuse:w1,reuse:w2")
    args = ap.parse_args()
    settings = [s.strip() for s in args.settings.split(",") if s.strip()]
    os.environ.setdefault("PYTHONPATH", str(Path(__file__).resolve().parents[1]))
    runs: list[dict[str, Any]] = []
    for rnd in range(args.rounds):
        order = settings[rnd % len(settings) :] + settings[: rnd % len(settings)]
        for s in order:
            res = run_setting(s, args.out / f"round{rnd}" / s.replace(":", "_"), args.seed_start, args.seeds)
            res["round"] = rnd
            runs.append(res)
            print(f"round {rnd} {s}: {res['episodes']} episodes in {res['process_wall_s']:.1f} s, "
                  f"{res['episodes_per_minute']:.1f}/min", file=sys.stderr, flush=True)  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cost.json").write_text(json.dumps(runs, indent=2) + "\n", encoding="utf-8")
    print(table(runs))
    reference = runs[0]["success"]
    differs = sorted({k for r in runs for k, v in r["success"].items() if reference.get(k) != v})
    if differs:
        print(f"success differs between settings on: {', '.join(differs)}")
        return 1
    n = len(reference)
    print(f"success identical in every setting on all {n} episodes ({sum(reference.values())}/{n} succeeded)")
    return 0


def table(runs: list[dict[str, Any]]) -> str:
    """Markdown: per setting (summed over rounds) episodes per minute, its ratio to the first, split, speed-up."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        by.setdefault(r["setting"], []).append(r)
    base = None
    lines = ["| setting | episodes | episodes/min | × first | episodes/core-min | render | physics | planning | "
             "perception | graph | setup | sim/wall per episode |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for s, rs in by.items():
        n = sum(r["episodes"] for r in rs)
        wall = sum(r["process_wall_s"] for r in rs)
        tot = {k: sum(r["totals"][k] for r in rs) for k in rs[0]["totals"]}
        epm = 60.0 * n / wall
        base = base or epm
        ew = tot["wall_s"] or 1.0
        share = [f"{100 * tot[k] / ew:.0f}%" for k in ("render_s", "physics_s", "planning_s", "perception_s",
                                                        "graph_s", "setup_s")]  # fmt: skip
        epcm = 60.0 * n / tot["cpu_s"] if tot["cpu_s"] else float("nan")
        lines.append(f"| {s} | {n} | {epm:.1f} | {epm / base:.2f} | {epcm:.1f} | " + " | ".join(share)
                     + f" | {tot['sim_s'] / ew:.2f} |")  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
