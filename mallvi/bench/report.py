"""results.json and table.md: our per-task results beside the paper's (Tables 1-3), with tier averages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mallvi.bench import anchors
from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.cost import cost_totals
from mallvi.bench.fidelity import comparable
from mallvi.bench.metrics import aggregate, mean_or_none
from mallvi.bench.tiers import PAPER_IDS, PLANNING_INDEPENDENT, PLANNING_SEQUENTIAL


def summarize(cfg: BenchConfig, records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-task aggregates of this run's tasks (only the episodes of the configured seed range count)."""
    tasks: dict[str, Any] = {}
    for task in cfg.tasks:
        recs = sorted((r for r in records if r["task"] == task), key=lambda r: int(r["seed"]))
        counted = [r for r in recs if r.get("status") != "skipped"][: cfg.episodes]
        last_seed = int(counted[-1]["seed"]) if counted else cfg.seed_start - 1
        skipped = [r for r in recs if r.get("status") == "skipped" and int(r["seed"]) <= last_seed]
        agg = aggregate(counted + skipped)
        entry: dict[str, Any] = {
            "paper_id": PAPER_IDS.get(task, task),
            "episodes": agg.episodes,
            "successes": agg.successes,
            "success_rate": agg.success_rate,
            "skipped_seeds": list(agg.skipped_seeds),
            "errors": sum(1 for r in counted if r.get("status") == "error"),
            "seeds": [int(r["seed"]) for r in counted],
            "mean_actions": mean_or_none([float(r.get("actions", 0)) for r in counted]),
            "refusals": sum(int(r.get("refusals", 0)) for r in counted),
            "complete": agg.episodes >= cfg.episodes,
            "cost": cost_totals(counted),
            "failures": [_failure(r) for r in counted if not r.get("success")],
            "randomization": randomization_summary(counted),
            "comparable": comparable(cfg, task).to_json(),
        }
        if cfg.tier == "grounding":
            entry["score"] = agg.score
        entry["paper"] = {
            m: anchors.task_scores(cfg.tier, m).get(task)
            for m in anchors.DEFAULT_ANCHOR_MODELS
            if m in anchors.models(cfg.tier)
        }
        tasks[task] = entry
    return tasks


def randomization_summary(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Which domain randomisation the episodes ran: the profile(s), whether the table was cluttered, and the
    number of distractors placed (min, mean, max over the episodes); None when no record says."""
    doms = [r["randomization"] for r in records if isinstance(r.get("randomization"), dict)]
    if not doms:
        return None
    counts = [int(d["distractors"]["count"]) for d in doms if isinstance(d.get("distractors"), dict)]
    out: dict[str, Any] = {
        "profiles": sorted({str(d.get("profile")) for d in doms}),
        "cluttered": any(bool(d.get("cluttered")) for d in doms),
        "textured_tables": sum(1 for d in doms if d.get("table_texture")),
        "random_light": sum(1 for d in doms if d.get("light")),
    }
    if counts:
        out["distractors"] = {"min": min(counts), "mean": round(sum(counts) / len(counts), 2), "max": max(counts)}
    return out


def _failure(record: dict[str, Any]) -> dict[str, Any]:
    """A failed episode: its seed, status and the success conditions that did not hold (or the error message)."""
    out: dict[str, Any] = {"seed": int(record["seed"]), "status": record.get("status")}
    failed = [c for c in record.get("conditions") or [] if not c.get("held")]
    if failed:
        out["failed_conditions"] = failed
    elif record.get("message"):
        out["message"] = str(record["message"])
    return out


def describe_failure(failure: dict[str, Any]) -> str:
    """One line per failed episode: each condition that missed, with measurement, limit and miss."""
    parts = []
    for c in failure.get("failed_conditions", []):
        text = str(c.get("name"))
        if "measured" in c and "limit" in c:
            unit = c.get("unit") or ""
            text += f" {c['measured']:.4g}{unit} ({c.get('kind')} {c['limit']:.4g}{unit})"
            if "miss" in c:
                text += f", missed by {c['miss']:.3g}{unit}"
        parts.append(text)
    if not parts:
        parts.append(str(failure.get("message") or failure.get("status") or "no condition recorded"))
    return "; ".join(parts)


def privileged_note(cfg: BenchConfig) -> str | None:
    """Why this run's numbers are not comparable with a model that sees only an RGB image (None if they are)."""
    if cfg.agent == "expert":
        return "privileged: the expert reads simulator truth (object poses, grasp frames, the arms' IK)"
    if cfg.perception == "sim" and cfg.agent in ("mallvi", "mallvi-no-reflector"):
        return "privileged: objects resolved from simulator truth"
    if cfg.tier == "grounding" and cfg.agent in ("mallvi", "mallvi-no-reflector") and cfg.backend == "rules":
        return "privileged: answers from detections back-projected with rendered depth (exact world x), not from RGB"
    return None


def tier_average(cfg: BenchConfig, tasks: dict[str, Any]) -> float | None:
    """Ours, in percent: mean score (Tier 1) or mean success rate × 100 over the tasks run."""
    key = "score" if cfg.tier == "grounding" else "success_rate"
    scale = 1.0 if cfg.tier == "grounding" else 100.0
    return mean_or_none([None if t[key] is None else t[key] * scale for t in tasks.values() if t["episodes"]])


def privileged_inputs(records: list[dict[str, Any]]) -> list[str]:
    """Every privileged input (simulator truth a rig would not have) that any episode's Station used."""
    return sorted({str(p) for r in records for p in r.get("privileged") or []})


def write_report(
    cfg: BenchConfig, out_dir: Path, records: list[dict[str, Any]], run_stats: dict[str, Any]
) -> dict[str, Any]:
    """Write results.json and table.md; return the results."""
    tasks = summarize(cfg, records)
    wall_s = float(run_stats.get("wall_s", 0.0))
    n_run = int(run_stats.get("episodes_run", 0))
    results = {
        "config": cfg.to_json(),
        "tasks": tasks,
        "tier_average": tier_average(cfg, tasks),
        "privileged": privileged_inputs(records),
        "privileged_note": privileged_note(cfg),
        "cost": cost_totals([r for r in records if r["task"] in tasks and r.get("status") != "skipped"]),
        "run": {**run_stats, "episodes_per_minute": (60.0 * n_run / wall_s) if wall_s > 0 and n_run else None},
    }
    (out_dir / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    (out_dir / "table.md").write_text(render_table(cfg, tasks), encoding="utf-8")
    return results


PROTOCOL_NOTES = {
    "paper": "protocol paper: the original benchmark's prompts, inputs, parsing and skills; a failed motion plan "
    "freezes the episode as its code does",
    "mallvi": "protocol mallvi: mallvi's own prompts, inputs and skills; not comparable with the paper",
}


def _mode_lines(cfg: BenchConfig) -> list[str]:
    """Which single-agent protocol produced the table (Tier 2 and 3 single-agent runs only)."""
    if cfg.agent != "single" or cfg.tier == "grounding":
        return []
    return [f"Single agent, {PROTOCOL_NOTES[cfg.single_protocol]}.", ""]


def _randomization_line(cfg: BenchConfig, tasks: dict[str, Any]) -> str:
    """One sentence on the domain randomisation the episodes ran."""
    if cfg.randomization == "none":
        return "Domain randomisation: none (plain table, no distractors; table height offset only)."
    cluttered = [f"{k} ({v['randomization']['distractors']['mean']:.1f})" for k, v in tasks.items()
                 if (v.get("randomization") or {}).get("distractors")]  # fmt: skip
    text = "Domain randomisation: the original's per task (table texture, light colours, table height offset)"
    return text + (f"; distractors, mean per episode: {', '.join(cluttered)}." if cluttered else "; no clutter.")


NOT_COMPARABLE = "✗"


def _comparable_lines(tasks: dict[str, Any]) -> list[str]:
    """Which rows can stand beside the paper's, and why the others cannot (``bench/fidelity.py``)."""
    marks = {k: v["comparable"] for k, v in tasks.items() if v.get("comparable")}
    yes = [k for k, m in marks.items() if m["comparable"]]
    no: dict[str, list[str]] = {}
    for k, m in marks.items():
        if not m["comparable"]:
            no.setdefault(m["why"], []).append(k)
    lines = [f"{NOT_COMPARABLE} after our figure: not comparable with the paper's (why: below)."] if no else []
    if yes:
        lines.append(f"Comparable with the paper: {', '.join(yes)} (remaining differences: docs/benchmark.md).")
    lines += [f"Not comparable ({why}): {', '.join(names)}." for why, names in no.items()]
    return lines


def _fmt(v: float | None, digits: int = 1) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def render_table(
    cfg: BenchConfig, tasks: dict[str, Any], models: tuple[str, ...] = anchors.DEFAULT_ANCHOR_MODELS
) -> str:
    """Markdown: one row per task (ours with n, then the paper's models), then the averages."""
    tier = cfg.tier
    shown = [m for m in models if m in anchors.models(tier)]
    unit = "mean spatial score (0-100)" if tier == "grounding" else "success rate (%)"
    lines = [
        f"# ST-BiBench {tier}: {cfg.agent} (backend {cfg.backend}, perception {cfg.perception}) vs the paper",
        "",
        *_mode_lines(cfg),
        f"{unit}; ours over n episodes from seed {cfg.seed_start}; paper: 100 episodes per task.",
        _randomization_line(cfg, tasks),
        "",
        "| task | id | ours | n | " + " | ".join(shown) + " |",
        "|---|---|---|---|" + "---|" * len(shown),
    ]
    note = privileged_note(cfg)
    if note:
        at = next(i for i, line in enumerate(lines) if line.startswith("| task"))
        lines[at:at] = [f"**{note}**: not comparable with the paper's models, which see an RGB image.", ""]
    for task, t in tasks.items():
        ours = t["score"] if tier == "grounding" else (100.0 * t["success_rate"] if t["episodes"] else None)
        cells = [_fmt(anchors.task_scores(tier, m).get(task)) for m in shown]
        mark = "" if t.get("comparable", {}).get("comparable", True) else f" {NOT_COMPARABLE}"
        lines.append(f"| {task} | {t['paper_id']} | {_fmt(ours)}{mark} | {t['episodes']} | " + " | ".join(cells) + " |")
    if tier == "planning":
        for label, group in (("independent avg", PLANNING_INDEPENDENT), ("sequential avg", PLANNING_SEQUENTIAL)):
            ran = {k: v for k, v in tasks.items() if k in group}
            if ran:
                ours_avg = tier_average(cfg, ran)
                idx = 0 if label.startswith("independent") else 1
                cells = [_fmt(anchors.planning_group_averages(m)[idx]) for m in shown]
                lines.append(f"| **{label}** | | {_fmt(ours_avg)} | | " + " | ".join(cells) + " |")
    cells = [_fmt(anchors.tier_average(tier, m)) for m in shown]
    lines.append(f"| **tier average** | | {_fmt(tier_average(cfg, tasks))} | | " + " | ".join(cells) + " |")
    lines += ["", "The paper's averages cover all of its tasks; ours cover the tasks run here."]
    lines += _comparable_lines(tasks)
    skipped = {k: v["skipped_seeds"] for k, v in tasks.items() if v["skipped_seeds"]}
    if skipped:
        lines.append("Seeds skipped because their scene could not be set up: " +
                     "; ".join(f"{k}: {', '.join(map(str, s))}" for k, s in skipped.items()) + ".")  # fmt: skip
    failed = [(k, f) for k, v in tasks.items() for f in v.get("failures", [])]
    if failed and tier != "grounding":
        lines += ["", "## Failed episodes (the success conditions that did not hold)", ""]
        lines += [f"- {k} seed {f['seed']}: {describe_failure(f)}" for k, f in failed]
    return "\n".join(lines) + "\n"
