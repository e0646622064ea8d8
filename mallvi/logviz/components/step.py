"""The detail panel of one node execution: verdict, images with overlays, LLM calls, events, inputs/outputs."""

from __future__ import annotations

import json
from typing import Any

from dash import dcc, html

from mallvi.logviz.components.overlay import boxes_in_outputs, overlay_captions, render_overlay
from mallvi.logviz.components.scene_graph_view import scene_graph_figure
from mallvi.logviz.fulltext import RUN_CALLS, cut, download_href, download_name, json_text, prompt_text
from mallvi.logviz.links import image_href
from mallvi.logviz.reader import NodeExec, RunSummary, event_field, full_event

_EVENT_TITLES = {
    "actor_command": "Actor command",
    "safety_refusal": "Safety refusal",
    "fault_injected": "Injected fault",
    "error": "Error",
}


def step_panel(run: RunSummary, index: int, key: str | None = None) -> html.Div:
    """Everything recorded about execution ``index`` of ``run`` (``key``: the run's viewer key, for downloads).

    Long texts are cut to ``MAX_SHOWN_CHARS``; with a ``key`` the page links to the whole text.
    """
    if not 0 <= index < len(run.node_execs):
        return html.Div(f"no node execution #{index} in this run", className="empty")
    ex = run.node_execs[index]
    children: list[Any] = [html.H3(f"{ex.label}", id="step-title"), _facts(run, ex)]
    if ex.verdict:
        children.append(_verdict(ex.verdict))
    if ex.blamed_by is not None:
        blamer = run.node_execs[ex.blamed_by]
        why = (blamer.verdict or {}).get("explanation", "")
        children.append(html.Div(f"Blamed by {blamer.label}: {why}", className="blamed"))
    outputs = ex.outputs
    children.extend(_images(run, ex.artifacts, outputs, key=key, exec_index=index))
    children.extend(_llm_calls(run, ex.llm_calls, key, index))
    events = [e for e in ex.events if e.get("kind") in _EVENT_TITLES]
    if events:
        children.append(html.H4("Commands and events"))
        children.append(html.Ul([_event_item(e) for e in events], className="events"))
    graph = _scene_graph_until(run, index)
    if graph is not None:
        children.append(html.H4("Scene graph"))
        children.append(
            dcc.Graph(
                id="scene-graph",
                figure=scene_graph_figure(graph.get("objects") or [], graph.get("relations") or []),
                config={"displaylogo": False},
            )
        )
    children.append(html.H4("Inputs (summarised state)"))
    children.extend(_long_text(json_text(ex.inputs), "json", "step-inputs", key, index, "inputs"))
    if ex.error is not None:
        children.append(html.H4("Error (the node raised)"))
        error = event_field(ex.end_event, "error", run.directory)
        children.extend(_long_text(str(error), "json error", "step-outputs", None, index, "error"))
    else:
        children.append(html.H4("Outputs (state update)"))
        children.extend(_long_text(json_text(outputs), "json", "step-outputs", key, index, "outputs"))
    return html.Div(children, className="step")


def _long_text(text: str, class_name: str, id_: str | None, key: str | None, exec_index: int, part: str,
               call: int | None = None) -> list[Any]:
    """A <pre> with at most ``MAX_SHOWN_CHARS`` of ``text``; when cut, a note and a link to the whole text."""
    shown, left_out = cut(text)
    pre_kw: dict[str, Any] = {"className": class_name}
    if id_ is not None:
        pre_kw["id"] = id_
    out: list[Any] = [html.Pre(shown, **pre_kw)]
    if left_out:
        note: list[Any] = [f"{left_out:,} more characters not shown"]
        if key is not None:
            note += [" · ", html.A(f"download the whole text ({len(text):,} characters)",
                                   href=download_href(key, exec_index, part, call),
                                   download=download_name(key, exec_index, part, call), className="download-full")]
        out.append(html.Div(note, className="cut-note"))
    return out


def _facts(run: RunSummary, ex: NodeExec) -> html.Table:
    duration = f"{ex.duration_s:.3f} s" if ex.duration_s is not None else "still running"
    rows = [
        ("node", ex.node),
        ("attempt", str(ex.attempt) + (f" (run {ex.run_count} of this node)" if ex.run_count else "")),
        ("subtask", "-" if ex.subtask_index is None else str(ex.subtask_index)),
        ("duration", duration),
        ("outcome", ex.outcome),
        ("route", json.dumps(ex.route) if ex.route is not None else "-"),
        ("next node", run.node_execs[ex.followed_by].label if ex.followed_by is not None else "-"),
    ]
    return html.Table([html.Tr([html.Th(k), html.Td(v)]) for k, v in rows], className="facts")


def _verdict(verdict: dict[str, Any]) -> html.Div:
    ok = str(verdict.get("verdict")).lower() in ("success", "ok", "true")
    return html.Div(
        [
            html.B(f"Verdict: {verdict.get('verdict')}"),
            html.Span(f" · blamed: {verdict.get('blamed_agent') or '-'}"),
            html.Span(f" · category: {verdict.get('failure_category') or '-'}"),
            html.Div(str(verdict.get("explanation") or "")),
        ],
        className="verdict ok" if ok else "verdict failure",
        id="step-verdict",
    )


def run_events_panel(run: RunSummary, key: str | None = None) -> html.Div:
    """Events that belong to no node execution (e.g. a benchmark agent that is not the graph, or a crash)."""
    loose = [e for e in run.unattached if e.get("kind") not in ("run_start", "run_end")]
    if not loose:
        return html.Div()
    artifacts = [e for e in loose if e.get("kind") == "artifact"]
    calls = [e for e in loose if e.get("kind") == "llm_call"]
    others = [e for e in loose if e.get("kind") not in ("artifact", "llm_call")]
    children: list[Any] = [html.H3(f"Run events outside node executions ({len(loose)})")]
    children.extend(_images(run, artifacts, None, id_prefix="run-image", key=key, exec_index=RUN_CALLS))
    children.extend(_llm_calls(run, calls, key, RUN_CALLS))
    if others:
        children.append(html.Ul([_event_item(e) for e in others], className="events"))
    return html.Div(children, className="run-events", id="run-events")


def _images(run: RunSummary, artifacts: list[dict[str, Any]], outputs: Any, id_prefix: str = "step-image",
            key: str | None = None, exec_index: int = RUN_CALLS) -> list[Any]:
    """The images of a step with their overlay captions. With the run's ``key`` each image is a link the browser
    fetches (``/image``: the page itself stays small); without one it is drawn into the page."""
    shown = [a for a in artifacts if (a.get("meta") or {}).get("role") != "mask"]
    if not shown:
        return []
    out: list[Any] = [html.H4(f"Images ({len(shown)})")]
    fallback = boxes_in_outputs(outputs)
    for i, artifact in enumerate(shown):
        title = f"{artifact.get('name', '')} ({artifact.get('path')})"
        url: str | None
        seq = artifact.get("seq")
        if key is not None and isinstance(seq, int) and not isinstance(seq, bool):
            captions = overlay_captions(run.directory, artifact, fallback)
            readable = not (captions and captions[0].startswith("missing image"))
            url = image_href(key, seq, exec_index) if readable else None
        else:
            url, captions = render_overlay(run.directory, artifact, fallback)
        body: list[Any] = [html.Div(title, className="image-title")]
        if url is not None:
            body.append(html.Img(src=url, className="step-image", id=f"{id_prefix}-{i}", alt=title))
        body.append(html.Ul([html.Li(c) for c in captions], className="overlay-list"))
        out.append(html.Figure(body, className="image-card"))
    return out


def _llm_calls(run: RunSummary, calls: list[dict[str, Any]], key: str | None, exec_index: int) -> list[Any]:
    out: list[Any] = []
    for i, indexed in enumerate(calls):
        call = full_event(indexed, run.directory)
        tokens = f"{call.get('tokens_in') or 0} in / {call.get('tokens_out') or 0} out tokens"
        latency = call.get("latency_s")
        timing = f" · {latency:.3f} s" if isinstance(latency, int | float) else ""
        head = f"LLM call {i + 1}: {call.get('model') or '?'}{timing} · {tokens}"
        block: list[Any] = [html.H4(head), html.Div("Prompt", className="label")]
        block += _long_text(prompt_text(call.get("prompt")), "llm-prompt", None, key, exec_index, "prompt", i)
        block.append(html.Div("Response", className="label"))
        block += _long_text(str(call.get("response") or ""), "llm-response", None, key, exec_index, "response", i)
        if call.get("error"):
            error, _ = cut(str(call["error"]))
            block.append(html.Div(f"Error: {error}", className="error"))
        out.append(html.Div(block, className="llm-call"))
    return out


def _event_item(event: dict[str, Any]) -> html.Li:
    kind = str(event.get("kind"))
    fields = {k: v for k, v in event.items() if k not in ("v", "seq", "t", "run_id", "kind") and not k.startswith("_")}
    bad = kind in ("safety_refusal", "fault_injected", "error") or fields.get("ok") is False
    return html.Li(
        [html.B(_EVENT_TITLES.get(kind, kind) + ": "), html.Code(cut(json_text(fields, indent=None))[0])],
        className="event bad" if bad else "event",
    )


def _scene_graph_until(run: RunSummary, index: int) -> dict[str, Any] | None:
    """The scene graph as of this step: a ``scene_graph`` event, else one found in a step's outputs/inputs."""
    for ex in reversed(run.node_execs[: index + 1]):
        for event in reversed(ex.events):
            if event.get("kind") == "scene_graph":
                return event
        found = ex.scene_graph(include_inputs=ex.index == index)
        if found is not None:
            return found
    return None
