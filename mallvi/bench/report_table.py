"""table.md: the report of ``report.write_report`` for people, in markdown.

Sections: the title (agent, models and endpoint host, perception, Station), the set-up (models, Station,
privileged inputs, randomisation), our figure per task with its 95% interval and n beside the paper's (a ``*``
below 20 episodes), the averages over the same tasks, then the model's cost per episode and per success, why
episodes failed (categories and the leading reasons) and one line per failed episode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mallvi.bench import anchors
from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.failures import CATEGORIES
from mallvi.bench.model_usage import describe_models

PROTOCOL_NOTES = {
    "paper": "protocol paper: the original benchmark's prompts, inputs, parsing and skills; a failed motion plan "
    "freezes the episode as its code does",
    "mallvi": "protocol mallvi: mallvi's own prompts, inputs and skills; not comparable with the paper",
}
NOT_COMPARABLE = "✗"
AGENT_LABELS = {
    "mallvi": "mallvi graph",
    "mallvi-no-reflector": "mallvi graph without the Reflector",
    "single": "single agent",
    "expert": "scripted expert",
}


def run_title(cfg: BenchConfig, models: Mapping[str, Any] | None) -> str:
    """Agent, models (or the rules backend), perception and Station in one line."""
    parts = [AGENT_LABELS.get(cfg.agent, cfg.agent)]
    if models:
        parts.append(f"models {describe_models(models)}")
    elif cfg.agent in ("mallvi", "mallvi-no-reflector"):
        parts.append("rules backend")
    if cfg.agent in ("mallvi", "mallvi-no-reflector"):
        parts.append(f"perception {cfg.perception}")
    if cfg.station == "twin":
        parts.append(f"station twin (calibration {Path(cfg.calibration or '').name})")
    else:
        parts.append("station sim")
    return ", ".join(parts)


def ours_figure(tier: str, task: Mapping[str, Any]) -> float | None:
    """Our figure of one task in the paper's unit: the mean score (Tier 1) or the success rate in percent."""
    if not task.get("episodes"):
        return None
    if tier == "grounding":
        score = task.get("score")
        return float(score) if isinstance(score, int | float) else None
    return 100.0 * float(task["success_rate"])


def _fmt(v: float | None, digits: int = 1) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def _interval(ci: Sequence[float] | None, scale: float = 100.0) -> str:
    return "—" if not ci else f"{scale * ci[0]:.1f}–{scale * ci[1]:.1f}"


def _mode_lines(cfg: BenchConfig) -> list[str]:
    """Which single-agent protocol produced the table (Tier 2 and 3 single-agent runs only)."""
    if cfg.agent != "single" or cfg.tier == "grounding":
        return []
    return [f"Single agent, {PROTOCOL_NOTES[cfg.single_protocol]}.", ""]


def _comparable_lines(tasks: Mapping[str, Any]) -> list[str]:
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


def _randomization_line(cfg: BenchConfig, tasks: Mapping[str, Any]) -> str:
    """One sentence on the domain randomisation the episodes ran."""
    if cfg.randomization == "none":
        return "Domain randomisation: none (plain table, no distractors; table height offset only)."
    cluttered = [f"{k} ({v['randomization']['distractors']['mean']:.1f})" for k, v in tasks.items()
                 if (v.get("randomization") or {}).get("distractors")]  # fmt: skip
    text = "Domain randomisation: the original's per task (table texture, light colours, table height offset)"
    return text + (f"; distractors, mean per episode: {', '.join(cluttered)}." if cluttered else "; no clutter.")


def _setup_lines(cfg: BenchConfig, results: Mapping[str, Any]) -> list[str]:
    models = results.get("models")
    lines = []
    if models:
        vision = models.get("vision_check") or {}
        seen = "; ".join(f"{m} {v} images" for m, v in vision.items())
        lines.append(f"- Models: {describe_models(models)}" + (f" (vision check: {seen})" if seen else "") + ".")
    elif cfg.agent != "expert":
        lines.append("- Models: none (rules backend).")
    station = results.get("station") or {}
    text = f"- Station: {station.get('name')}, {station.get('description')}"
    if station.get("calibration"):
        text += f", calibration {station['calibration']}"
    lines.append(text + ".")
    privileged = results.get("privileged") or []
    lines.append("- Privileged inputs (a rig would not have them): " + ("; ".join(privileged) if privileged
                                                                          else "none") + ".")
    lines.append("- " + _randomization_line(cfg, results["tasks"]))
    return lines


def _task_rows(cfg: BenchConfig, tasks: Mapping[str, Any], shown: list[str]) -> list[str]:
    rows = []
    for task, t in tasks.items():
        ours = ours_figure(cfg.tier, t)
        mark = "*" if t.get("indicative") and t["episodes"] else ""
        if not t.get("comparable", {}).get("comparable", True):
            mark += f" {NOT_COMPARABLE}"
        ci = _interval(t.get("score_ci95"), 1.0) if cfg.tier == "grounding" else _interval(t.get("success_ci95"))
        cells = [_fmt(anchors.task_scores(cfg.tier, m).get(task)) for m in shown]
        extra = ""
        if cfg.tier == "grounding":
            extra = f" {_fmt(100.0 * t['success_rate'] if t['episodes'] else None)} ({_interval(t['success_ci95'])}) |"
        rows.append(f"| {task} | {t['paper_id']} | {_fmt(ours)}{mark} | {ci} | {t['episodes']} |{extra} "
                    + " | ".join(cells) + " |")
    return rows


def _average_rows(cfg: BenchConfig, averages: Mapping[str, Any], shown: list[str]) -> list[str]:
    rows = []
    labels = {"independent": "independent avg", "sequential": "sequential avg", "all": "average"}
    for key in ("independent", "sequential", "all"):
        avg = averages.get(key)
        if not avg:
            continue
        n = len(avg["tasks"])
        cells = [_fmt(avg["paper"].get(m)) + ("†" if m in avg["paper_partial"] else "") for m in shown]
        pad = " |" if cfg.tier == "grounding" else ""
        over = "this task" if n == 1 else f"these {n} tasks"
        rows.append(f"| **{labels[key]}, {over}** | | {_fmt(avg['ours'])} | | |{pad} " + " | ".join(cells) + " |")
    return rows


def _usage_lines(tasks: Mapping[str, Any], total: Mapping[str, Any] | None) -> list[str]:
    if not total:
        return []
    lines = ["", "## Model use per episode and per success", "",
             "| task | episodes | calls | tokens in | tokens out | latency s | calls/success | tokens in/success | "
             "tokens out/success | latency s/success |", "|---|---|---|---|---|---|---|---|---|---|"]

    def row(name: str, u: Mapping[str, Any]) -> str:
        pe, ps = u.get("per_episode") or {}, u.get("per_success") or {}
        cells = [_fmt(pe.get(k)) for k in ("calls", "tokens_in", "tokens_out", "latency_s")]
        cells += [_fmt(ps.get(k)) for k in ("calls", "tokens_in", "tokens_out", "latency_s")]
        return f"| {name} | {u['episodes']} | " + " | ".join(cells) + " |"

    lines += [row(task, t["llm"]) for task, t in tasks.items() if t.get("llm")]
    lines.append(row("**all**", total))
    lines += ["", "Per episode: the mean over the episodes; per success: their sum divided by the successes (— with "
              "none). Latency: seconds spent waiting for the model."]
    return lines


def _failure_lines(tasks: Mapping[str, Any]) -> list[str]:
    used = [c for c in CATEGORIES if any(t.get("failure_categories", {}).get(c) for t in tasks.values())]
    if not used:
        return []
    lines = ["", "## Why episodes failed", "",
             "| task | failed | " + " | ".join(used) + " |", "|---|---|" + "---|" * len(used)]
    for task, t in tasks.items():
        cats = t.get("failure_categories") or {}
        if cats:
            lines.append(f"| {task} | {sum(cats.values())} | " + " | ".join(str(cats.get(c, 0)) for c in used) + " |")
    lines += ["", "Leading reasons (at most three per task):", ""]
    for task, t in tasks.items():
        for r in t.get("leading_reasons") or []:
            seeds = ", ".join(map(str, r["seeds"])) + ("…" if r["count"] > len(r["seeds"]) else "")
            lines.append(f"- {task}: {r['reason']} ({r['category']}, {r['count']}×: seeds {seeds})")
    return lines


def describe_failure(failure: Mapping[str, Any]) -> str:
    """One line per failed episode: its category, then each condition that missed (measurement, limit, miss) for
    a missed condition, else the reason in words."""
    if failure.get("category") not in (None, "condition missed"):
        return f"{failure['category']}: {failure.get('reason')}"
    parts = []
    for c in failure.get("failed_conditions", []):
        text = str(c.get("name"))
        if isinstance(c.get("measured"), int | float) and isinstance(c.get("limit"), int | float):
            unit = c.get("unit") or ""
            text += f" {c['measured']:.4g}{unit} ({c.get('kind')} {c['limit']:.4g}{unit})"
            if isinstance(c.get("miss"), int | float):
                text += f", missed by {c['miss']:.3g}{unit}"
        parts.append(text)
    if not parts:
        parts.append(str(failure.get("reason") or failure.get("message") or failure.get("status")
                         or "no condition recorded"))
    prefix = "condition missed: " if failure.get("category") else ""
    return prefix + "; ".join(parts)


def render_table(cfg: BenchConfig, results: Mapping[str, Any],
                 models: tuple[str, ...] = anchors.DEFAULT_ANCHOR_MODELS) -> str:
    """The whole table.md of ``results`` (as ``report.write_report`` builds them)."""
    tier = cfg.tier
    tasks = results["tasks"]
    shown = [m for m in models if m in anchors.models(tier)]
    unit = "mean spatial score (0-100)" if tier == "grounding" else "success rate (%)"
    interval = "normal approximation" if tier == "grounding" else "Wilson"
    lines = [
        f"# ST-BiBench {tier}: {results.get('title') or cfg.agent} vs the paper",
        "",
        *_mode_lines(cfg),
        *_setup_lines(cfg, results),
        "",
        f"Ours: {unit} with its 95% interval ({interval}) over n episodes from seed {cfg.seed_start}; "
        "paper: 100 episodes per task.",
        "",
    ]
    note = results.get("privileged_note")
    if note:
        lines += [f"**{note}**: not comparable with the paper's models, which see an RGB image.", ""]
    extra = " all blocks right % (95% CI) |" if tier == "grounding" else ""
    lines += ["| task | id | ours | 95% CI | n |" + extra + " " + " | ".join(shown) + " |",
              "|---|---|---|---|---|" + ("---|" if extra else "") + "---|" * len(shown)]
    lines += _task_rows(cfg, tasks, shown)
    lines += _average_rows(cfg, results.get("averages") or {}, shown)
    lines.append("")
    if any(t.get("indicative") and t["episodes"] for t in tasks.values()):
        lines.append(f"\\* fewer than {results.get('indicative_below', 20)} episodes: the figure is indicative "
                     "only (see its interval).")
    lines.append("Averages are over the same tasks for ours and the paper's models (the paper's own averages "
                 "cover all of its tasks).")
    lines += _comparable_lines(tasks)
    if any(a.get("paper_partial") for a in (results.get("averages") or {}).values()):
        lines.append("† the paper reports no figure for some of these tasks for that model; its average is over "
                     "those it reports.")
    skipped = {k: v["skipped_seeds"] for k, v in tasks.items() if v["skipped_seeds"]}
    if skipped:
        lines.append("Seeds skipped because their scene could not be set up: " +
                     "; ".join(f"{k}: {', '.join(map(str, s))}" for k, s in skipped.items()) + ".")  # fmt: skip
    for item in results.get("null_values") or []:
        lines.append(f"`{item['field']}` is null: {item['why']}.")
    lines += _usage_lines(tasks, results.get("llm"))
    lines += _failure_lines(tasks)
    failed = [(k, f) for k, v in tasks.items() for f in v.get("failures", [])]
    if failed:
        lines += ["", "## Failed episodes", ""]
        lines += [f"- {k} seed {f['seed']}: {describe_failure(f)}" for k, f in failed]
    return "\n".join(lines) + "\n"
