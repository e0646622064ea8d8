"""The run list: one row per run with task, outcome, duration, LLM calls and tokens; filterable."""

from __future__ import annotations

from urllib.parse import quote

from dash import dcc, html

from mallvi.logviz.reader import RunSummary

COLUMNS = ("run", "task", "instruction", "outcome", "duration", "node runs", "LLM calls", "tokens", "events")


def filter_runs(
    runs: list[tuple[str, RunSummary]], tasks: list[str] | None, outcomes: list[str] | None
) -> list[tuple[str, RunSummary]]:
    """The runs whose task and outcome are among the selected ones (an empty selection keeps all)."""
    return [
        (key, run)
        for key, run in runs
        if (not tasks or (run.task or "-") in tasks) and (not outcomes or run.outcome in outcomes)
    ]


def run_table(runs: list[tuple[str, RunSummary]]) -> html.Table | html.Div:
    """A table of runs; the run and task cells link to the run's page."""
    if not runs:
        return html.Div("no runs match", className="empty", id="run-table-empty")
    header = html.Thead(html.Tr([html.Th(c) for c in COLUMNS]))
    rows = []
    for key, run in runs:
        href = run_href(key)
        duration = f"{run.duration_s:.1f} s" if run.duration_s is not None else "-"
        rows.append(
            html.Tr(
                [
                    html.Td(dcc.Link(key, href=href, className="run-link")),
                    html.Td(run.task or "-"),
                    html.Td(run.instruction or "-", className="instruction"),
                    html.Td(run.outcome, className=f"outcome {run.outcome}"),
                    html.Td(duration),
                    html.Td(str(len(run.node_execs))),
                    html.Td(str(run.llm_calls)),
                    html.Td(f"{run.tokens:,}"),
                    html.Td(str(run.n_events)),
                ],
                className="run-row",
            )
        )
    return html.Table([header, html.Tbody(rows)], className="runs", id="run-table")


def run_href(key: str) -> str:
    return "/run?path=" + quote(key, safe="")


def filter_options(runs: list[tuple[str, RunSummary]]) -> tuple[list[str], list[str]]:
    """The distinct tasks and outcomes to offer in the filters."""
    tasks = sorted({run.task or "-" for _, run in runs})
    outcomes = sorted({run.outcome for _, run in runs})
    return tasks, outcomes
