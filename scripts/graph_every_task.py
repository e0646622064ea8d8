"""The side-by-side table of scripts/graph_every_task.sh's runs: per task, the expert's and the graph's success
(simulator perception, colour perception, medium faults) beside GPT-5's in the paper, the graph's rate as a share of
the expert's, how often the graph's own verdict agreed with the task's check (over all three graph runs), how many
medium-fault episodes ended with an object of the task off the table (simulator truth: no agent can finish those)
and the medium-fault rate over the others, and the wall and CPU time per episode (graph / expert, from the
episode records of the same machine).
Usage: .venv/bin/python scripts/graph_every_task.py OUT_ROOT [--markdown]"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from statistics import mean
from typing import Any

from mallvi.bench import anchors
from mallvi.bench.failures import off_table

RUNS = ("expert", "graph-sim", "graph-color", "graph-sim-medium")


def records(folder: Path) -> list[dict[str, Any]]:
    path = folder / "episodes.jsonl"
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if rec.get("status") != "skipped":
            out.append(rec)
    return out


def rate(recs: list[dict[str, Any]]) -> tuple[int, int]:
    return sum(1 for r in recs if r.get("success")), len(recs)


def fmt(wins_n: tuple[int, int]) -> str:
    wins, n = wins_n
    return f"{wins}/{n}" if n else "—"


def share(a: tuple[int, int], b: tuple[int, int]) -> str:
    if not a[1] or not b[1] or not b[0]:
        return "—"
    return f"{(a[0] / a[1]) / (b[0] / b[1]):.2f}"


def cpu(recs: list[dict[str, Any]]) -> float | None:
    """Mean CPU seconds per episode (the episode's own process; less sensitive to other load than wall time)."""
    vals = [float(r["cost"]["cpu_s"]) for r in recs if isinstance(r.get("cost"), dict) and "cpu_s" in r["cost"]]
    return mean(vals) if vals else None


def ratio(a: float | None, b: float | None) -> str:
    return f"{a:.1f} / {b:.1f} = {a / b:.1f}" if a and b else "—"


def main(root: Path, markdown: bool) -> None:
    rows = []
    for tier in ("planning", "fine"):
        by_run = {run: records(root / f"{run}-{tier}") for run in RUNS}
        tasks = sorted({r["task"] for recs in by_run.values() for r in recs},
                       key=lambda t: [r["task"] for r in by_run["expert"]].index(t)
                       if any(r["task"] == t for r in by_run["expert"]) else 99)
        for task in tasks:
            per = {run: [r for r in recs if r["task"] == task] for run, recs in by_run.items()}
            expert, graph = rate(per["expert"]), rate(per["graph-sim"])
            colour, medium = rate(per["graph-color"]), rate(per["graph-sim-medium"])
            gone = sum(1 for r in per["graph-sim-medium"] if not r.get("success") and off_table(r))
            on_table = (medium[0], medium[1] - gone)
            agree = [r for run in RUNS[1:] for r in per[run] if r.get("graph_success") is not None]
            agreed = sum(1 for r in agree if bool(r["graph_success"]) == bool(r["success"]))
            wall_g = mean(float(r["wall_s"]) for r in per["graph-sim"]) if per["graph-sim"] else None
            wall_e = mean(float(r["wall_s"]) for r in per["expert"]) if per["expert"] else None
            paper = anchors.task_scores("planning" if tier == "planning" else "fine", "GPT-5").get(task)
            rows.append([tier, task, "—" if paper is None else f"{paper:g}", fmt(expert), fmt(graph),
                         share(graph, expert), fmt(colour),
                         share(colour, expert), fmt(medium), share(medium, graph), str(gone) if medium[1] else "—",
                         share(on_table, graph),
                         f"{agreed}/{len(agree)}" if agree else "—",
                         f"{wall_g:.1f} / {wall_e:.1f} = {wall_g / wall_e:.1f}" if wall_g and wall_e else "—",
                         ratio(cpu(per["graph-sim"]), cpu(per["expert"]))])
    head = ["tier", "task", "GPT-5 (paper, %)", "expert", "graph (sim)", "÷ expert", "graph (colour)", "÷ expert",
            "graph, medium faults", "÷ no faults", "object off the table", "÷ no faults, the others",
            "verdict = check", "s per episode graph / expert",
            "CPU s per episode graph / expert"]
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        for r in [head, *rows]:
            print("  ".join(f"{c:<14}" for c in r))
    for tier in ("planning", "fine"):
        for run in RUNS[1:]:
            failed = [e for e in records(root / f"{run}-{tier}") if not e.get("success")]
            if not failed:
                continue
            print(f"\n{run}-{tier}: {len(failed)} failed episodes")
            for e in failed:
                why = (e.get("failure_report") or {}).get("reason") if isinstance(e.get("failure_report"), dict) \
                    else e.get("failure_report")
                why = why or e.get("message") or (f"graph said success; task check: {e.get('conditions')}"
                                                  if e.get("graph_success") else "")
                print(f"  {e['task']} {e['seed']}: {str(why)[:240]}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), "--markdown" in sys.argv[2:])
