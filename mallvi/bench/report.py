"""results.json and table.md: an evaluation report to cite, per task and per tier, beside the paper's figures.

Per task: episodes, the success rate with its 95% Wilson interval (a mark below ``INDICATIVE_BELOW`` episodes),
Tier 1's mean score with its interval, the model's calls, tokens and latency per episode and per success, the
failures by category with the leading reasons in words, the Station and the privileged inputs. Per tier: the
models and endpoint host, our average and the paper's averaged over the same tasks only. ``report_table`` renders
the markdown; the fields are listed in docs/benchmark.md ("Output folder").
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from mallvi.bench import anchors
from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.cost import cost_totals
from mallvi.bench.failures import breakdown, categorize, in_words
from mallvi.bench.fidelity import comparable
from mallvi.bench.metrics import INDICATIVE_BELOW, aggregate, mean_interval, mean_or_none, wilson_interval
from mallvi.bench.model_usage import model_usage, models_summary, sum_usage
from mallvi.bench.report_table import ours_figure, render_table, run_title
from mallvi.bench.tiers import PAPER_IDS, PLANNING_INDEPENDENT, PLANNING_SEQUENTIAL
from mallvi.tracing.redaction import redact_text, redact_value


def _secrets(cfg: BenchConfig) -> tuple[str, ...]:
    key = cfg.run_config().llm.api_key if cfg.model_use() else ""
    return (key,) if key else ()


def summarize(cfg: BenchConfig, records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-task aggregates of this run's tasks (only the episodes of the configured seed range count)."""
    tasks: dict[str, Any] = {}
    secrets = _secrets(cfg)
    for task in cfg.tasks:
        recs = sorted((r for r in records if r["task"] == task), key=lambda r: int(r["seed"]))
        counted = [r for r in recs if r.get("status") != "skipped"][: cfg.episodes]
        last_seed = int(counted[-1]["seed"]) if counted else cfg.seed_start - 1
        skipped = [r for r in recs if r.get("status") == "skipped" and int(r["seed"]) <= last_seed]
        agg = aggregate(counted + skipped)
        interval = wilson_interval(agg.successes, agg.episodes)
        failed = [r for r in counted if not r.get("success")]
        why = breakdown(failed, secrets)
        entry: dict[str, Any] = {
            "paper_id": PAPER_IDS.get(task, task),
            "episodes": agg.episodes,
            "successes": agg.successes,
            "success_rate": agg.success_rate,
            "success_ci95": None if interval is None else [round(interval[0], 6), round(interval[1], 6)],
            "indicative": agg.episodes < INDICATIVE_BELOW,
            "skipped_seeds": list(agg.skipped_seeds),
            "errors": sum(1 for r in counted if r.get("status") == "error"),
            "seeds": [int(r["seed"]) for r in counted],
            "mean_actions": mean_or_none([_finite_or_none(r.get("actions", 0)) for r in counted]),
            "refusals": sum(int(r.get("refusals", 0) or 0) for r in counted),
            "complete": agg.episodes >= cfg.episodes,
            "stations": sorted({str(r["station"]) for r in counted if r.get("station")}),
            "privileged": sorted({str(p) for r in counted for p in r.get("privileged") or []}),
            "llm": model_usage(counted),
            "failure_categories": why["by_category"],
            "leading_reasons": why["leading_reasons"],
            "cost": cost_totals(counted),
            "failures": [_failure(r, secrets) for r in failed],
            "randomization": randomization_summary(counted),
            "comparable": comparable(cfg, task).to_json(),
        }
        if cfg.tier == "grounding":
            entry["score"] = agg.score
            scores = [float(r["score"]) for r in counted if _finite_or_none(r.get("score")) is not None]
            ci = mean_interval(scores) if agg.score is not None else None
            entry["score_ci95"] = None if ci is None else [round(ci[0], 3), round(ci[1], 3)]
            bad = [int(r["seed"]) for r in counted if _finite_or_none(r.get("score")) is None]
            if bad and agg.score is None:
                entry["score_null_because"] = (f"{len(bad)} episode(s) have no finite score (seeds "
                                               f"{', '.join(map(str, bad[:10]))}); the mean is not defined")
        entry["paper"] = {
            m: anchors.task_scores(cfg.tier, m).get(task)
            for m in anchors.DEFAULT_ANCHOR_MODELS
            if m in anchors.models(cfg.tier)
        }
        tasks[task] = entry
    return tasks


def _finite_or_none(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def randomization_summary(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Which domain randomisation the episodes ran: the profile(s), whether the table was cluttered, and the
    number of distractors placed (min, mean, max over the episodes); None when no record says."""
    doms = [r["randomization"] for r in records if isinstance(r.get("randomization"), dict)]
    if not doms:
        return None
    counts = [int(d["distractors"]["count"]) for d in doms if isinstance(d.get("distractors"), dict)
              and isinstance(d["distractors"].get("count"), int)]  # fmt: skip
    out: dict[str, Any] = {
        "profiles": sorted({str(d.get("profile")) for d in doms}),
        "cluttered": any(bool(d.get("cluttered")) for d in doms),
        "textured_tables": sum(1 for d in doms if d.get("table_texture")),
        "random_light": sum(1 for d in doms if d.get("light")),
    }
    if counts:
        out["distractors"] = {"min": min(counts), "mean": round(sum(counts) / len(counts), 2), "max": max(counts)}
    return out


def _failure(record: dict[str, Any], secrets: tuple[str, ...] = ()) -> dict[str, Any]:
    """A failed episode: its seed, status, category and reason in words, and the success conditions that did not
    hold (or the error message)."""
    category, reason = categorize(record, secrets)
    out: dict[str, Any] = {"seed": int(record["seed"]), "status": record.get("status"), "category": category,
                           "reason": reason}
    failed = [c for c in record.get("conditions") or [] if isinstance(c, dict) and not c.get("held")]
    if failed:
        out["failed_conditions"] = failed
    if record.get("message"):
        out["message"] = in_words(record["message"], secrets)
    return out


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
    return mean_or_none([ours_figure(cfg.tier, t) for t in tasks.values() if t["episodes"]])


def averages(cfg: BenchConfig, tasks: dict[str, Any]) -> dict[str, Any]:
    """Ours and each anchor model's, over the same tasks (those run with at least one episode); for Tier 2 also per
    group (independent, sequential). ``paper_partial`` lists models the paper reports on only some of them."""

    def over(names: list[str]) -> dict[str, Any]:
        paper: dict[str, float | None] = {}
        partial = []
        for m in anchors.DEFAULT_ANCHOR_MODELS:
            if m not in anchors.models(cfg.tier):
                continue
            avg, n = anchors.same_tasks_average(cfg.tier, m, names)
            paper[m] = None if avg is None else round(avg, 3)
            if 0 < n < len(names):
                partial.append(m)
        ours = mean_or_none([ours_figure(cfg.tier, tasks[t]) for t in names])
        return {"tasks": names, "ours": ours, "paper": paper, "paper_partial": partial}

    ran = [t for t, v in tasks.items() if v["episodes"]]
    out = {"all": over(ran)}
    if cfg.tier == "planning":
        for label, group in (("independent", PLANNING_INDEPENDENT), ("sequential", PLANNING_SEQUENTIAL)):
            names = [t for t in ran if t in group]
            if names:
                out[label] = over(names)
    return out


def privileged_inputs(records: list[dict[str, Any]]) -> list[str]:
    """Every privileged input (simulator truth a rig would not have) that any episode's Station used."""
    return sorted({str(p) for r in records for p in r.get("privileged") or []})


def station_summary(cfg: BenchConfig) -> dict[str, Any]:
    """The Station the episodes ran on, in words; the twin's calibration file by name."""
    if cfg.station == "twin":
        return {"name": "twin", "calibration": Path(cfg.calibration or "").name or None,
                "description": "the rig's drivers, camera and skills on a simulated twin of each scene"}
    return {"name": "sim", "calibration": None, "description": "the simulator's Station"}


def finite_json(value: Any, path: str = "", nulls: list[dict[str, str]] | None = None) -> Any:
    """``value`` with every NaN or infinite number replaced by None; each replacement's path appended to
    ``nulls`` (so that results.json is valid JSON and says why a figure is missing)."""
    if isinstance(value, float) and not math.isfinite(value):
        if nulls is not None:
            nulls.append({"field": path, "why": f"the records gave {value!r}, which is not a number JSON can hold"})
        return None
    if isinstance(value, dict):
        return {k: finite_json(v, f"{path}.{k}" if path else str(k), nulls) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(v, f"{path}[{i}]", nulls) for i, v in enumerate(value)]
    return value


def write_report(
    cfg: BenchConfig, out_dir: Path, records: list[dict[str, Any]], run_stats: dict[str, Any]
) -> dict[str, Any]:
    """Write results.json and table.md; return the results (the same as written: numbers finite or null)."""
    tasks = summarize(cfg, records)
    counted = [r for r in records if r["task"] in tasks and r.get("status") != "skipped"]
    wall_s = float(run_stats.get("wall_s", 0.0))
    n_run = int(run_stats.get("episodes_run", 0))
    failed = [r for r in counted if not r.get("success")]
    why = breakdown(failed, _secrets(cfg))
    endpoint = run_stats.get("endpoint") if isinstance(run_stats.get("endpoint"), dict) else None
    results: dict[str, Any] = {
        "title": run_title(cfg, models_summary(cfg)),
        "config": cfg.to_json(),
        "models": models_summary(cfg, endpoint),
        "station": station_summary(cfg),
        "interval": "Wilson score interval, 95%",
        "indicative_below": INDICATIVE_BELOW,
        "tasks": tasks,
        "tier_average": tier_average(cfg, tasks),
        "averages": averages(cfg, tasks),
        "llm": sum_usage(t["llm"] for t in tasks.values()),
        "failure_categories": why["by_category"],
        "leading_reasons": why["leading_reasons"],
        "privileged": privileged_inputs(counted),
        "privileged_note": privileged_note(cfg),
        "cost": cost_totals(counted),
        "run": {**run_stats, "episodes_per_minute": (60.0 * n_run / wall_s) if wall_s > 0 and n_run else None},
    }
    nulls: list[dict[str, str]] = [{"field": f"tasks.{k}.score", "why": v["score_null_because"]}
                                   for k, v in tasks.items() if v.get("score_null_because")]  # fmt: skip
    results = finite_json(results, nulls=nulls)
    results["null_values"] = nulls
    results = redact_value(results, default=str)  # a model's text may echo the API key: never written
    (out_dir / "results.json").write_text(json.dumps(results, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    (out_dir / "table.md").write_text(redact_text(render_table(cfg, results)), encoding="utf-8")
    return results
