"""Figures for the agent graph: `mallvi run --backend rules` success over seeds, wall time, graph overhead.

Usage: .venv/bin/python scripts/graph_figures.py [--seeds 20] [--workers 2] [--perception color]
       [--agent mallvi|no-reflector|single] [--contingency LEVEL] [--cases 0,1] [--out DIR]

For each benchmark instruction it runs the graph in the simulator on seeds 0..N-1 (one process per worker, worlds
built in-process like `mallvi run`) and prints: success rate (simulator truth), the graph's own success rate,
mean wall time per run, and graph overhead per node transition = (graph wall time - time inside the nodes) /
number of node transitions. Results go to DIR/graph_figures.json and DIR/graph_figures.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

CASES = [
    ("stack the green block on the red block", "stack_blocks_three"),
    ("put the red cube on top of the blue one", "stack_blocks_three"),
    ("place the red, green and blue blocks from left to right", "blocks_ranking_rgb"),
    ("hand over the red block from the left arm to the right arm", "handover_block"),
]


def _run(job: tuple[str, str, int, str, str, str | None]) -> dict[str, Any]:
    from mallvi.bench.task_scenes import scene_catalog
    from mallvi.config import RunConfig
    from mallvi.orchestration.run_instruction import run
    from mallvi.orchestration.stations import RunRequest

    instruction, task, seed, perception, agent, contingency = job
    cfg = RunConfig(perception=perception, reflector=agent != "no-reflector",  # type: ignore[arg-type]
                    single_agent=agent == "single", contingency=contingency)
    t0 = time.perf_counter()
    try:
        r = run(RunRequest(instruction=instruction, task=task, seed=seed), cfg, catalog=scene_catalog())
    except Exception as e:  # a crash is a data point, not the end of the measurement
        return {"instruction": instruction, "task": task, "seed": seed, "success": False, "graph_success": False,
                "status": f"crash: {type(e).__name__}: {e}", "wall_s": time.perf_counter() - t0}
    return {"instruction": instruction, "task": task, "seed": seed, "success": r.success,
            "graph_success": r.graph_success, "status": r.status, "wall_s": r.wall_s, "graph_s": r.graph_s,
            "node_time_s": r.node_time_s, "transitions": r.transitions,
            "failure": (r.failure_report or {}).get("reason") or r.refusal}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--seed-start", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--perception", default="color", choices=["color", "sim"])
    ap.add_argument("--cases", default="all", help="comma-separated case numbers (0-3) or all")
    ap.add_argument("--agent", default="mallvi", choices=["mallvi", "no-reflector", "single"],
                    help="the full graph or one of the ablations")
    ap.add_argument("--contingency", default=None, help="fault injection level (easy|medium|hard|kind=p,...)")
    ap.add_argument("--out", default="figures/graph")
    args = ap.parse_args(argv)
    cases = CASES if args.cases == "all" else [CASES[int(i)] for i in args.cases.split(",")]
    jobs = [(ins, task, s, args.perception, args.agent, args.contingency) for ins, task in cases
            for s in range(args.seed_start, args.seed_start + args.seeds)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        rows = list(pool.map(_run, jobs))
    total_s = time.perf_counter() - t0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "graph_figures.json").write_text(json.dumps(rows, indent=1))
    lines = [f"# Agent graph ({args.agent}), rules backend, perception={args.perception}, "
             f"contingency={args.contingency or 'none'}, seeds "
             f"{args.seed_start}..{args.seed_start + args.seeds - 1}", "",
             "| instruction | task | success | graph believes | mean wall s | overhead ms/transition |",
             "|---|---|---|---|---|---|"]
    for ins, task in cases:
        rs = [r for r in rows if r["instruction"] == ins]
        ok = sum(r["success"] for r in rs)
        gok = sum(r["graph_success"] for r in rs)
        walls = [r["wall_s"] for r in rs]
        over = [(r["graph_s"] - r["node_time_s"]) / r["transitions"] for r in rs if r.get("transitions")]
        lines.append(f"| {ins} | {task} | {ok}/{len(rs)} | {gok}/{len(rs)} | {statistics.mean(walls):.1f} | "
                     f"{1000 * statistics.mean(over):.2f} |")
    lines.append("")
    lines.append(f"total {total_s:.0f} s with {args.workers} worker(s)")
    (out / "graph_figures.md").write_text("\n".join(lines) + "\n")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
