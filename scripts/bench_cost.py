"""The benchmark's cost, settings side by side: episodes per minute, CPU, sim-time speed-up, success per seed.

Runs ``mallvi bench`` (the mallvi agent, rules backend, colour perception) on the same seeds of
stack_blocks_two (Tier 3) and blocks_ranking_rgb (Tier 2) once per setting, each setting in fresh processes as a
user would run it (so each pays its start-up), the settings interleaved round by round in a rotating order because
the machine is shared. Prints one table and writes DIR/cost.json; exits 1 when a seed's success differs between
settings (the settings must not change results).

    scripts/bench_cost.py --out runs/cost --seed-start 800000 --seeds 20 --rounds 2 \\
        --tree base=/tmp/cost-base --settings "reuse:w1@base,reuse:w2@base,reuse:w0"

A setting is ``reuse|no-reuse`` : ``w<workers>`` (``w0`` = the bench's default) and optionally ``@<tree>``: the
mallvi source tree to run, named with ``--tree NAME=PATH`` (default: the tree this script belongs to).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TASKS = (("fine", "stack_blocks_two"), ("planning", "blocks_ranking_rgb"))
HERE = Path(__file__).resolve().parents[1]
COST_KEYS = ("wall_s", "sim_s", "cpu_s", "setup_s", "render_s", "physics_s", "planning_s", "perception_s", "graph_s")


def _children_cpu_s() -> float:
    """CPU seconds (user + system) of every finished child process and its own children so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _load_1min() -> float:
    return os.getloadavg()[0]


def run_setting(setting: str, trees: dict[str, Path], out: Path, seed_start: int, seeds: int) -> dict[str, Any]:
    """One setting over both tasks, each task one ``mallvi bench`` process; wall and CPU include the start-up."""
    spec, _, tree_name = setting.partition("@")
    reuse, workers = spec.split(":")
    tree = trees[tree_name] if tree_name else HERE
    env = dict(os.environ, PYTHONPATH=str(tree))
    records: list[dict[str, Any]] = []
    wall = cpu = 0.0
    for tier, task in TASKS:
        cmd = [sys.executable, "-m", "mallvi.cli", "bench", "--tier", tier, "--tasks", task, "--episodes", str(seeds),
               "--seed-start", str(seed_start), "--out", str(out / task), "--quiet", "--json"]  # fmt: skip
        if workers != "w0":
            cmd += ["--workers", workers[1:]]
        if reuse == "no-reuse":
            cmd.append("--no-reuse")
        t0, c0 = time.perf_counter(), _children_cpu_s()
        # cwd = the tree, so ``-m mallvi.cli`` finds that tree's package before any installed one
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=tree, env=env)
        wall += time.perf_counter() - t0
        cpu += _children_cpu_s() - c0
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{setting} {task}: mallvi bench failed ({proc.returncode}): {proc.stderr[-2000:]}")
        with open(out / task / "episodes.jsonl", encoding="utf-8") as fh:
            records += [json.loads(line) for line in fh if line.strip()]
    counted = [r for r in records if r.get("status") != "skipped"]
    costs = [r["cost"] for r in counted if r.get("cost")]
    return {
        "setting": setting,
        "tree": str(tree),
        "episodes": len(counted),
        "process_wall_s": wall,
        "process_cpu_s": cpu,
        "totals": {k: sum(float(c.get(k, 0.0)) for c in costs) for k in COST_KEYS},
        # the episodes' wait for a core (other processes' load), where the tree records it
        "queue": [sum(float(c["queue_s"]) for c in costs if "queue_s" in c),
                  sum(float(c["wall_s"]) for c in costs if "queue_s" in c)],
        "success": {f"{r['task']}/{r['seed']}": bool(r.get("success")) for r in counted},
        "actions": {f"{r['task']}/{r['seed']}": r.get("actions") for r in counted},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--seed-start", type=int, default=300000)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--settings", default="no-reuse:w1,no-reuse:w2,reuse:w1,reuse:w2")
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=PATH",
                    help="a mallvi source tree a setting can name as @NAME")  # fmt: skip
    args = ap.parse_args()
    settings = [s.strip() for s in args.settings.split(",") if s.strip()]
    trees = {name: Path(path).resolve() for name, _, path in (t.partition("=") for t in args.tree)}
    unknown = {s.partition("@")[2] for s in settings} - set(trees) - {""}
    if unknown:
        raise SystemExit(f"no --tree given for {', '.join(sorted(unknown))}")
    runs: list[dict[str, Any]] = []
    load = {"before": os.getloadavg()}
    for rnd in range(args.rounds):
        order = settings[rnd % len(settings) :] + settings[: rnd % len(settings)]
        for s in order:
            load_0 = _load_1min()
            res = run_setting(s, trees, args.out / f"round{rnd}" / s.replace(":", "_").replace("@", "_"),
                              args.seed_start, args.seeds)  # fmt: skip
            res.update(round=rnd, load_1min=[load_0, _load_1min()])
            runs.append(res)
            print(f"round {rnd} {s}: {res['episodes']} episodes in {res['process_wall_s']:.1f} s "
                  f"({60.0 * res['episodes'] / res['process_wall_s']:.1f}/min), CPU {res['process_cpu_s']:.1f} s, "
                  f"load {load_0:.1f} -> {_load_1min():.1f}", file=sys.stderr, flush=True)  # fmt: skip
    load["after"] = os.getloadavg()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cost.json").write_text(json.dumps({"load": load, "runs": runs}, indent=2) + "\n", encoding="utf-8")
    print(table(runs))
    print(f"load average (1, 5, 15 min) before {fmt_load(load['before'])}, after {fmt_load(load['after'])}")
    reference = runs[0]["success"]
    differs = sorted({k for r in runs for k, v in r["success"].items() if reference.get(k) != v})
    if differs:
        print(f"success differs between settings on: {', '.join(differs)}")
        return 1
    n = len(reference)
    same_actions = all(r["actions"] == runs[0]["actions"] for r in runs)
    print(f"success identical in every setting on all {n} episodes ({sum(reference.values())}/{n} succeeded); "
          f"actions per episode {'identical' if same_actions else 'differ'}")  # fmt: skip
    return 0


def fmt_load(values: tuple[float, ...] | list[float]) -> str:
    return ", ".join(f"{v:.1f}" for v in values)


def table(runs: list[dict[str, Any]]) -> str:
    """Markdown, per setting summed over rounds: episodes per minute and per core-minute (process wall and CPU,
    start-up included), the ratio to the first setting, CPU and wall per episode, simulated time per wall time."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        by.setdefault(r["setting"], []).append(r)
    base = None
    lines = ["| setting | episodes | episodes/min | × first | episodes/core-min | CPU s/episode | "
             "wall s/episode | waiting for a core | sim s/episode | sim/wall (episode) | sim/wall (process) | "
             "success |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for s, rs in by.items():
        n = sum(r["episodes"] for r in rs)
        wall = sum(r["process_wall_s"] for r in rs)
        cpu = sum(r["process_cpu_s"] for r in rs)
        tot = {k: sum(r["totals"][k] for r in rs) for k in COST_KEYS}
        wins = sum(sum(r["success"].values()) for r in rs)
        queued, queued_wall = (sum(r.get("queue", [0.0, 0.0])[i] for r in rs) for i in (0, 1))
        queue = f"{100.0 * queued / queued_wall:.0f}%" if queued_wall else "—"
        epm = 60.0 * n / wall
        base = base or epm
        lines.append(f"| {s} | {n} | {epm:.1f} | {epm / base:.2f} | {60.0 * n / cpu:.1f} | {cpu / n:.2f} | "
                     f"{tot['wall_s'] / n:.2f} | {queue} | {tot['sim_s'] / n:.1f} | "
                     f"{tot['sim_s'] / tot['wall_s']:.1f} | {tot['sim_s'] / wall:.1f} | {wins}/{n} |")  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
