"""The timeline of one run: a bar per node execution, coloured by outcome, with the Reflector's retry routes.

Two layouts: *by node* (a row per graph node, x = seconds since the run started, arrows for the retries) and
*by attempt* (a row per subtask attempt, x = seconds since that attempt started), the default for runs with many
retries, where the by-node rows would be a wall of bars. A bar shorter than a small share of the axis is drawn at
that share so that it can be clicked (its hover text gives the real duration).
"""

from __future__ import annotations

import time
from typing import Any

import plotly.graph_objects as go

from mallvi.logviz.reader import NodeExec, RunSummary, finite_number

#: outcome -> (legend name, colour)
OUTCOME_STYLE: dict[str, tuple[str, str]] = {
    "ok": ("ok", "#43a047"),
    "blamed": ("blamed by the Reflector", "#ec407a"),
    "failed": ("failing verdict", "#fb8c00"),
    "error": ("error", "#e53935"),
    "interrupted": ("interrupted", "#fdd835"),
    "running": ("running", "#90a4ae"),
}


#: the timeline row of events that belong to no node execution
EVENTS_LANE = "run events"

BY_NODE = "node"
BY_ATTEMPT = "attempt"
#: a run with more retries than this (or more bars than ``MAX_LABELLED_BARS``) opens in the by-attempt layout
MAX_RETRIES_BY_NODE = 4
#: above this many bars, a label that does not fit inside its bar is hidden (the hover text still names it)
MAX_LABELLED_BARS = 60
#: above this many retry arrows, they are drawn without their text (the hover still says why)
MAX_ARROW_LABELS = 8
#: the narrowest bar drawn, as a share of the axis: by node (whole run) and by attempt (the longest attempt)
MIN_BAR_SHARE = {BY_NODE: 0.004, BY_ATTEMPT: 0.012}
#: by attempt, a bar narrower than this share of the axis carries no label (the browser need not fit it)
MIN_LABEL_SHARE = 0.05
#: by attempt, the rows drawn at once (a browser draws some 2,000 bars in seconds; the rest are a page away)
ROWS_PER_PAGE = 40


def bar_outcome(ex: NodeExec) -> str:
    """The colour class of a bar: a blamed execution shows as such even though the node itself returned."""
    if ex.outcome == "ok" and ex.blamed_by is not None:
        return "blamed"
    return ex.outcome if ex.outcome in OUTCOME_STYLE else "ok"


def lanes(run: RunSummary) -> list[str]:
    """Node names in order of first execution (the graph's order for a normal run)."""
    out: list[str] = []
    for ex in run.node_execs:
        if ex.node not in out:
            out.append(ex.node)
    return out


def retries(run: RunSummary) -> int:
    """How many subtask attempts beyond each subtask's first the run made."""
    groups = {(ex.subtask_index, ex.attempt) for ex in run.node_execs}
    return len(groups) - len({s for s, _ in groups})


def default_layout(run: RunSummary) -> str:
    """``BY_ATTEMPT`` for a run with many retries or bars, else ``BY_NODE``."""
    many = retries(run) > MAX_RETRIES_BY_NODE or len(run.node_execs) > MAX_LABELLED_BARS
    return BY_ATTEMPT if many else BY_NODE


def timeline_figure(run: RunSummary, layout: str | None = None, first_row: int | None = None) -> go.Figure:
    """The run's timeline in ``layout`` (``BY_NODE`` or ``BY_ATTEMPT``; default: ``default_layout``); by attempt,
    ``ROWS_PER_PAGE`` rows from ``first_row`` (default: the last page, where the run ended).

    ``customdata`` of a bar is ``[exec index, its start in Unix seconds]``.
    """
    if (layout or default_layout(run)) == BY_ATTEMPT:
        return attempt_figure(run, first_row)
    return node_figure(run)


def attempt_pages(run: RunSummary) -> list[dict[str, Any]]:
    """The by-attempt pages as dropdown options: ``{"label": "attempt rows 41–80 of 259", "value": 40}``."""
    n = len(attempt_groups(run))
    return [{"label": f"attempt rows {start + 1}–{min(start + ROWS_PER_PAGE, n)} of {n}", "value": start}
            for start in range(0, n, ROWS_PER_PAGE)]


def last_page(run: RunSummary) -> int:
    """The first row of the by-attempt page that holds the run's last attempt."""
    n = len(attempt_groups(run))
    return max(0, (n - 1) // ROWS_PER_PAGE * ROWS_PER_PAGE)


def node_figure(run: RunSummary) -> go.Figure:
    """Horizontal bars (x = seconds since the run started, one row per node)."""
    names = lanes(run)
    loose = [e for e in run.unattached if e.get("kind") not in ("run_start", "run_end", "video")]
    if loose:
        names.append(EVENTS_LANE)
    row = {name: i for i, name in enumerate(names)}
    t0 = run.t_start or (run.node_execs[0].t_start if run.node_execs else 0.0)
    # a live run's unfinished bars reach the moment of drawing; a killed run's stop at its last event
    t_now = time.time() if run.outcome == "running" else (run.t_end or t0)
    span_s = max([t_now - t0] + [ex.t_start - t0 + _duration(ex, t_now) for ex in run.node_execs] + [1e-3])
    min_w = MIN_BAR_SHARE[BY_NODE] * span_s
    fig = go.Figure()
    if loose:
        fig.add_trace(_events_trace(loose, row[EVENTS_LANE], t0))
    for outcome, (legend, colour) in OUTCOME_STYLE.items():
        execs = [ex for ex in run.node_execs if bar_outcome(ex) == outcome]
        if not execs:
            continue
        durations = [_duration(ex, t_now) for ex in execs]
        fig.add_trace(_bars(legend, colour, execs, [row[ex.node] for ex in execs],
                            [ex.t_start - t0 for ex in execs], [max(d, min_w) for d in durations],
                            [ex.label for ex in execs], durations))
    arrows = _route_annotations(run, row, t0, t_now)
    for annotation in arrows:
        if len(arrows) > MAX_ARROW_LABELS:
            annotation["text"] = ""
        fig.add_annotation(**annotation)
    fig.update_layout(
        barmode="overlay",
        uniformtext={"minsize": 9, "mode": "hide" if len(run.node_execs) > MAX_LABELLED_BARS else "show"},
        height=140 + 38 * max(len(names), 1),
        margin={"l": 10, "r": 10, "t": 30, "b": 40},
        xaxis={"title": {"text": "seconds since run start"}, "rangemode": "tozero"},
        yaxis={"tickvals": list(range(len(names))), "ticktext": names, "autorange": "reversed"},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        clickmode="event",
        uirevision=str(run.directory) + BY_NODE,  # keep the user's zoom while live updates arrive
        plot_bgcolor="#fafafa",
    )
    return fig


def attempt_groups(run: RunSummary) -> list[tuple[tuple[int | None, int], list[NodeExec]]]:
    """The node executions by (subtask index, attempt), in order of first appearance."""
    groups: dict[tuple[int | None, int], list[NodeExec]] = {}
    for ex in run.node_execs:
        groups.setdefault((ex.subtask_index, ex.attempt), []).append(ex)
    return list(groups.items())


def group_label(subtask: int | None, attempt: int, execs: list[NodeExec]) -> str:
    """A row's name: its subtask and attempt, and how its last verdict went (``failed: category → agent``)."""
    head = "run" if subtask is None else f"subtask {subtask} · attempt {attempt}"
    verdict = next((ex.verdict for ex in reversed(execs) if ex.verdict), None)
    if verdict is None:
        return head
    if str(verdict.get("verdict", "")).lower() in ("success", "ok", "true"):
        return head + " · ok"
    why = verdict.get("failure_category") or "failed"
    blamed = verdict.get("blamed_agent")
    return f"{head} · {why}" + (f" → {blamed}" if blamed else "")


def attempt_figure(run: RunSummary, first_row: int | None = None) -> go.Figure:
    """A row per subtask attempt; in a row its node executions in order (x = seconds since the attempt began).

    Rows ``first_row`` .. ``first_row + ROWS_PER_PAGE - 1`` are drawn (default: the last page).
    """
    all_groups = attempt_groups(run)
    start = last_page(run) if first_row is None else max(0, min(first_row, last_page(run)))
    groups = all_groups[start:start + ROWS_PER_PAGE]
    t_now = time.time() if run.outcome == "running" else (run.t_end or (run.t_start or 0.0))
    spans = [max(ex.t_start + _duration(ex, t_now) for ex in execs) - execs[0].t_start for _, execs in groups]
    axis_s = max([*spans, 1e-3])
    min_w = MIN_BAR_SHARE[BY_ATTEMPT] * axis_s
    placed: dict[int, tuple[int, float, float]] = {}  # exec index -> (row, base, width)
    for row, (_, execs) in enumerate(groups):
        t0, end = execs[0].t_start, 0.0
        for ex in execs:  # a widened short bar pushes the next one to its right, so none covers another
            base = max(ex.t_start - t0, end)
            width = max(_duration(ex, t_now), min_w)
            placed[ex.index] = (row, base, width)
            end = base + width
    names = [group_label(s, a, execs) for (s, a), execs in groups]
    fig = go.Figure()
    for outcome, (legend, colour) in OUTCOME_STYLE.items():
        execs = [ex for ex in run.node_execs if ex.index in placed and bar_outcome(ex) == outcome]
        if not execs:
            continue
        fig.add_trace(_bars(legend, colour, execs, [placed[ex.index][0] for ex in execs],
                            [placed[ex.index][1] for ex in execs], [placed[ex.index][2] for ex in execs],
                            [ex.node if placed[ex.index][2] >= MIN_LABEL_SHARE * axis_s else "" for ex in execs],
                            [_duration(ex, t_now) for ex in execs]))
    fig.update_layout(
        barmode="overlay",
        uniformtext={"minsize": 9, "mode": "hide"},
        height=140 + 30 * max(len(names), 1),
        margin={"l": 10, "r": 10, "t": 30, "b": 40},
        xaxis={"title": {"text": "seconds since the attempt started"}, "rangemode": "tozero"},
        yaxis={"tickvals": list(range(len(names))), "ticktext": names, "autorange": "reversed"},
        legend={"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0},
        clickmode="event",
        uirevision=f"{run.directory}{BY_ATTEMPT}{start}",
        plot_bgcolor="#fafafa",
    )
    return fig


def _bars(legend: str, colour: str, execs: list[NodeExec], rows: list[int], bases: list[float],
          widths: list[float], labels: list[str], durations: list[float]) -> go.Bar:
    return go.Bar(
        orientation="h",
        name=legend,
        y=rows,
        base=bases,
        x=widths,
        customdata=[[ex.index, ex.t_start] for ex in execs],
        width=[0.72] * len(execs),
        text=labels,
        textposition="inside",
        textangle=0,
        textfont={"color": "#102027"},  # dark: readable on the bars and where a label overflows a short bar
        insidetextanchor="middle",
        marker={"color": colour, "line": {"color": "#263238", "width": 1}},
        hovertext=[_hover(ex, d) for ex, d in zip(execs, durations, strict=True)],
        hoverinfo="text",
    )


def _events_trace(events: list[dict[str, Any]], y: int, t0: float) -> go.Scatter:
    """Markers for events outside any node execution (red when something failed)."""
    bad = [e.get("kind") in ("error", "safety_refusal", "fault_injected") or e.get("ok") is False for e in events]
    return go.Scatter(
        x=[(finite_number(e.get("t")) or t0) - t0 for e in events],
        y=[y] * len(events),
        mode="markers",
        name="run events",
        marker={"symbol": "diamond", "size": 11, "color": ["#e53935" if b else "#1e88e5" for b in bad]},
        hovertext=[_event_hover(e) for e in events],
        hoverinfo="text",
    )


def _event_hover(event: dict[str, Any]) -> str:
    kind = str(event.get("kind"))
    detail = event.get("skill") or event.get("name") or event.get("where") or event.get("model") or ""
    message = str(event.get("message") or event.get("reason") or "")[:120]
    return "<br>".join(p for p in (f"<b>{kind}</b> {detail}", message) if p)


def _route_annotations(run: RunSummary, row: dict[str, int], t0: float, t_now: float) -> list[dict[str, Any]]:
    """Arrows from each failing Reflector verdict to the execution it sent the run back to."""
    out: list[dict[str, Any]] = []
    for ex in run.node_execs:
        verdict = ex.verdict
        if verdict is None or ex.outcome != "failed":
            continue
        target = ex.route if isinstance(ex.route, str) and ex.route in row else verdict.get("blamed_agent")
        nxt = next((e for e in run.node_execs[ex.index + 1 :] if e.node == target), None)
        if nxt is None:
            continue
        why = verdict.get("failure_category") or verdict.get("explanation") or "failure"
        out.append(
            {
                "x": nxt.t_start - t0,
                "y": row[nxt.node],
                "ax": ex.t_start - t0 + _duration(ex, t_now),
                "ay": row[ex.node],
                "xref": "x",
                "yref": "y",
                "axref": "x",
                "ayref": "y",
                "showarrow": True,
                "arrowhead": 3,
                "arrowwidth": 2,
                "arrowcolor": "#d84315",
                "text": f"retry {nxt.node}",
                "hovertext": f"{ex.label} → {nxt.label}: {why}",
                "xanchor": "left",
                "yanchor": "bottom",
                "font": {"color": "#bf360c", "size": 11},
                "bgcolor": "rgba(255,255,255,0.85)",
            }
        )
    return out


def _duration(ex: NodeExec, t_now: float) -> float:
    if ex.duration_s is not None:
        return ex.duration_s
    return max(t_now - ex.t_start, 0.0)


def _hover(ex: NodeExec, duration_s: float) -> str:
    parts = [f"<b>{ex.label}</b>", f"subtask {ex.subtask_index}", f"{duration_s:.3f} s", f"outcome {ex.outcome}"]
    if ex.llm_calls:
        parts.append(f"{len(ex.llm_calls)} LLM call(s)")
    if ex.verdict:
        parts.append(f"verdict {ex.verdict.get('verdict')} → {ex.verdict.get('blamed_agent') or '-'}")
    return "<br>".join(parts)
