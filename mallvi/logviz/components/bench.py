"""The benchmark page: our success per task beside the paper's numbers, and the episodes with their traces."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dash import dcc, html

from mallvi.bench import anchors
from mallvi.bench.tiers import parse_tier
from mallvi.logviz.components.runlist import run_href
from mallvi.logviz.files import read_document, read_records, read_text

log = logging.getLogger(__name__)

#: how many of the paper's models to show beside ours
MAX_PAPER_MODELS = 4


@dataclass
class TaskRow:
    task: str
    episodes: int | None = None
    success_rate: float | None = None  # 0..1
    score: float | None = None  # Tier 1 mean spatial score, 0..100
    paper: dict[str, float | None] = field(default_factory=dict)  # model -> % (from results.json)
    interval: tuple[float, float] | None = None  # 95% interval of our figure, in its unit (%, or the score)
    indicative: bool = False  # fewer episodes than results.json's ``indicative_below``
    llm_per_episode: dict[str, float] = field(default_factory=dict)  # calls, tokens_in, tokens_out, latency_s
    failures: dict[str, int] = field(default_factory=dict)  # category -> episodes
    top_reason: str | None = None  # the leading reason a failed episode gave, in words


def parse_results(results: Any) -> tuple[str, list[TaskRow]]:
    """The tier and per-task rows of a ``results.json``; tolerant of a ``tasks`` dict or list, or task keys."""
    if not isinstance(results, Mapping):
        return "", []
    raw_config = results.get("config")
    config: Mapping[str, Any] = raw_config if isinstance(raw_config, Mapping) else {}
    tier = str(results.get("tier") or config.get("tier") or "")
    tasks = results.get("tasks", results.get("per_task"))
    items: list[tuple[str, Any]] = []
    if isinstance(tasks, Mapping):
        items = list(tasks.items())
    elif isinstance(tasks, list):
        items = [(str(t.get("task") or t.get("name")), t) for t in tasks if isinstance(t, Mapping)]
    else:
        items = [(k, v) for k, v in results.items() if isinstance(v, Mapping) and "success_rate" in v]
    rows = []
    for name, entry in items:
        if not isinstance(entry, Mapping):
            continue
        rate = _num(entry.get("success_rate"))
        if rate is not None and rate > 1.0:  # given in percent
            rate /= 100.0
        raw_paper = entry.get("paper")
        paper: Mapping[str, Any] = raw_paper if isinstance(raw_paper, Mapping) else {}
        if not paper and _num(entry.get("paper_success")) is not None:
            paper = {"paper": _num(entry.get("paper_success"))}
        rows.append(
            TaskRow(
                task=name,
                episodes=int(e) if (e := _num(entry.get("episodes"))) is not None else None,
                success_rate=rate,
                score=_num(entry.get("score")),
                paper={str(k): _num(v) for k, v in paper.items()},
                **_report_fields(tier, entry),
            )
        )
    return tier, rows


def _report_fields(tier: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """The evaluation report's fields of one task entry (results.json written since they exist), tolerantly."""
    out: dict[str, Any] = {"indicative": entry.get("indicative") is True}
    ci = entry.get("score_ci95") if tier == "grounding" else entry.get("success_ci95")
    scale = 1.0 if tier == "grounding" else 100.0
    if isinstance(ci, list) and len(ci) == 2 and all(_num(v) is not None for v in ci):
        out["interval"] = (scale * float(ci[0]), scale * float(ci[1]))
    llm = entry.get("llm")
    per = llm.get("per_episode") if isinstance(llm, Mapping) else None
    if isinstance(per, Mapping):
        out["llm_per_episode"] = {str(k): n for k, v in per.items() if (n := _num(v)) is not None}
    cats = entry.get("failure_categories")
    if isinstance(cats, Mapping):
        out["failures"] = {str(k): int(n) for k, v in cats.items() if (n := _num(v)) is not None}
    reasons = entry.get("leading_reasons")
    if isinstance(reasons, list) and reasons and isinstance(reasons[0], Mapping):
        top = reasons[0]
        out["top_reason"] = f"{top.get('reason')} ({top.get('category')}, {top.get('count')}×)"
    return out


def paper_tier_average(tier: str, model: str) -> float | None:
    """The paper's overall average of one model on a tier, from ``mallvi.bench.anchors`` (None if unknown)."""
    try:
        return _num(anchors.tier_average(parse_tier(tier), model))
    except ValueError:  # a results file naming a tier this version does not know
        return None


def paper_numbers(tier: str, tasks: list[str]) -> dict[str, dict[str, float | None]]:
    """model -> task -> the paper's % from ``mallvi.bench.anchors`` (empty for an unknown tier)."""
    try:
        tier_name = parse_tier(tier)
    except ValueError as e:
        log.warning("no paper numbers: %s", e)
        return {}
    available = anchors.models(tier_name)
    wanted = [m for m in anchors.DEFAULT_ANCHOR_MODELS if m in available]
    out: dict[str, dict[str, float | None]] = {}
    for model in wanted[:MAX_PAPER_MODELS]:
        scores = anchors.task_scores(tier_name, model)
        out[model] = {t: scores.get(t) for t in tasks}
    return out


def bench_page(bench_dir: Path, key: str, trace_keys: set[str]) -> html.Div:
    """Per-task table (ours beside the paper's) and the episode list of one bench output folder."""
    results, results_problem = read_document(bench_dir / "results.json")
    tier, rows = parse_results(results)
    tier_avg = _num(results.get("tier_average")) if isinstance(results, Mapping) else None
    children: list[Any] = [
        html.H2(f"Benchmark: {key if key != '.' else bench_dir.name}"),
        html.Div(f"tier: {tier or 'unknown'}", className="tier"),
        *(_setup(results) if isinstance(results, Mapping) else []),
    ]
    if results_problem is not None:
        children.append(html.Div(f"results.json could not be read: {results_problem}", className="problems"))
    if not rows:
        children.append(html.Div("results.json is missing or has no per-task results", className="empty"))
    else:
        same = _same_task_averages(results)
        children.append(_task_table(tier, rows, tier_avg, same))
        if any(r.indicative for r in rows):
            below = _num(results.get("indicative_below")) if isinstance(results, Mapping) else None
            children.append(html.Div(f"* fewer than {int(below or 20)} episodes: indicative only (see the 95% "
                                     "interval)", className="note"))
    table_md = read_text(bench_dir / "table.md")
    if table_md is not None:
        children.append(html.Details([html.Summary("table.md"), dcc.Markdown(table_md)]))
    episodes, problems = read_records(bench_dir / "episodes.jsonl")
    if problems:
        listed = "; ".join(str(p) for p in problems[:5]) + (" …" if len(problems) > 5 else "")
        children.append(html.Div(f"{len(problems)} line(s) of episodes.jsonl could not be read and are left out: "
                                 f"{listed}", className="problems", id="episode-problems"))
    if episodes:
        children.append(html.H3(f"Episodes ({len(episodes)})"))
        children.append(_episode_table(bench_dir, key, episodes, trace_keys))
    return html.Div(children, className="bench")


def _setup(results: Mapping[str, Any]) -> list[Any]:
    """The run's title, models and endpoint host, and Station, as results.json states them."""
    out: list[Any] = []
    if isinstance(results.get("title"), str):
        out.append(html.Div(results["title"], className="bench-title", id="bench-title"))
    models = results.get("models")
    if isinstance(models, Mapping) and isinstance(models.get("by_agent"), Mapping):
        by_model: dict[str, list[str]] = {}
        for agent, model in models["by_agent"].items():
            by_model.setdefault(str(model), []).append(str(agent))
        text = "; ".join(f"{', '.join(a)}: {m}" for m, a in by_model.items())
        out.append(html.Div(f"models: {text} (endpoint {models.get('endpoint') or '?'})", className="models",
                            id="bench-models"))
    station = results.get("station")
    if isinstance(station, Mapping) and station.get("name"):
        calibration = f", calibration {station['calibration']}" if station.get("calibration") else ""
        out.append(html.Div(f"station: {station['name']}{calibration}", className="station", id="bench-station"))
    return out


def _same_task_averages(results: Any) -> Mapping[str, Any] | None:
    """results.json's averages over the tasks run (ours and the paper's over the same tasks), if it has them."""
    averages = results.get("averages") if isinstance(results, Mapping) else None
    same = averages.get("all") if isinstance(averages, Mapping) else None
    return same if isinstance(same, Mapping) and isinstance(same.get("paper"), Mapping) else None


def _task_table(tier: str, rows: list[TaskRow], ours_average: float | None,
                same: Mapping[str, Any] | None = None) -> html.Table:
    paper = paper_numbers(tier, [r.task for r in rows])
    if not paper:  # fall back to numbers stored in results.json
        for r in rows:
            for model, value in r.paper.items():
                paper.setdefault(model, {})[r.task] = value
    models = list(paper)
    ours_title = "ours: score" if tier == "grounding" else "ours: success %"
    report = [("95% interval", "ci")] if any(r.interval for r in rows) else []
    if any(r.llm_per_episode for r in rows):
        report.append(("model calls / tokens in / out per episode", "llm"))
    if any(r.failures for r in rows):
        report.append(("why episodes failed (leading reason)", "why"))
    header = html.Thead(
        html.Tr([html.Th("task"), html.Th("episodes"), html.Th(ours_title)] + [html.Th(t) for t, _ in report]
                + [html.Th(f"paper: {m}") for m in models])
    )
    body = []
    ours_values: list[float] = []
    for r in rows:
        ours = (
            r.score
            if tier == "grounding" and r.score is not None
            else (100.0 * r.success_rate if r.success_rate is not None else None)
        )
        if ours is not None and r.episodes != 0:
            ours_values.append(ours)
        body.append(
            html.Tr(
                [
                    html.Td(r.task),
                    html.Td("-" if r.episodes is None else str(r.episodes)),
                    html.Td(_pct(ours) + ("*" if r.indicative else ""), className="ours"),
                ]
                + [html.Td(_report_cell(r, kind), className=kind) for _, kind in report]
                + [html.Td(_pct(paper[m].get(r.task)), className="paper") for m in models]
            )
        )
    if ours_average is None and ours_values:
        ours_average = sum(ours_values) / len(ours_values)
    pad = [html.Th("") for _ in report]
    if same is not None:
        n = len(same.get("tasks") or [])
        footer = html.Tfoot(html.Tr(
            [html.Th(f"average over these {n} task(s), the paper's over the same"), html.Th(""),
             html.Th(_pct(_num(same.get("ours"))), className="ours"), *pad]
            + [html.Th(_pct(_num(same["paper"].get(m))), className="paper") for m in models]))
    else:
        footer = html.Tfoot(
            html.Tr(
                [html.Th("tier average (paper: all its tasks)"), html.Th(""),
                 html.Th(_pct(ours_average), className="ours"), *pad]
                + [html.Th(_pct(paper_tier_average(tier, m)), className="paper") for m in models]
            )
        )
    return html.Table([header, html.Tbody(body), footer], className="bench-table", id="bench-table")


def _report_cell(row: TaskRow, kind: str) -> str:
    if kind == "ci":
        return "-" if row.interval is None else f"{row.interval[0]:.1f}–{row.interval[1]:.1f}"
    if kind == "llm":
        per = row.llm_per_episode
        if not per:
            return "-"
        return f"{per.get('calls', 0):.1f} / {per.get('tokens_in', 0):.0f} / {per.get('tokens_out', 0):.0f}"
    if not row.failures:
        return "-"
    counts = ", ".join(f"{c} {n}" for c, n in row.failures.items())
    return counts + (f" — {row.top_reason}" if row.top_reason else "")


def _episode_table(bench_dir: Path, key: str, episodes: list[dict[str, Any]], trace_keys: set[str]) -> html.Table:
    columns = ("task", "seed", "status", "success", "score", "failed conditions", "trace")
    header = html.Thead(html.Tr([html.Th(c) for c in columns]))
    body = []
    for ep in episodes:
        trace = ep.get("trace")
        trace_key = _trace_key(key, str(trace)) if trace else None
        link: Any = dcc.Link("open", href=run_href(trace_key)) if trace_key in trace_keys else "-"
        success = ep.get("success")
        body.append(
            html.Tr(
                [
                    html.Td(str(ep.get("task", "-"))),
                    html.Td(str(ep.get("seed", "-"))),
                    html.Td(str(ep.get("status", "-"))),
                    html.Td(str(success), className=f"outcome {'success' if success else 'failure'}"),
                    html.Td(_pct(_num(ep.get("score")))),
                    html.Td(failed_conditions(ep), className="conditions"),
                    html.Td(link),
                ]
            )
        )
    return html.Table([header, html.Tbody(body)], className="episodes", id="episode-table")


def failed_conditions(episode: Mapping[str, Any]) -> str:
    """The success conditions a failed episode missed, each with its measurement, limit and miss ("" if none)."""
    conditions = episode.get("conditions")
    if not isinstance(conditions, list):
        return ""
    parts = []
    for c in conditions:
        if not isinstance(c, Mapping) or c.get("held"):
            continue
        measured, limit, miss = _num(c.get("measured")), _num(c.get("limit")), _num(c.get("miss"))
        text = str(c.get("name", "?"))
        if measured is not None and limit is not None:
            unit = str(c.get("unit") or "")
            text += f" {measured:.3g}{unit} ({c.get('kind', '')} {limit:.3g}{unit})"
            if miss is not None:
                text += f", missed by {miss:.3g}{unit}"
        parts.append(text)
    return "; ".join(parts)


def _trace_key(bench_key: str, trace: str) -> str:
    rel = Path(trace)
    if rel.is_absolute():
        return rel.as_posix()
    return (Path(bench_key) / rel).as_posix() if bench_key != "." else rel.as_posix()


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
