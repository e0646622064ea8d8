"""Read a trace back: incremental (live) reading and a run summary with node executions.

``load_run(dir)`` reads a finished or growing trace once; ``TraceReader(dir)`` keeps its place in
``events.jsonl`` and, on each ``refresh()``, reads only what was appended since (complete lines only),
so a viewer can poll a run that is still being written.
"""

from __future__ import annotations

import logging
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mallvi.tracing.capture import find_verdict
from mallvi.tracing.trace import parse_event_line

log = logging.getLogger(__name__)

#: A run without run_end whose file has not changed for this long is shown as incomplete, not running.
STALE_AFTER_S = 300.0

#: Event kinds attached to the node execution during which they happened.
STEP_EVENT_KINDS = ("actor_command", "safety_refusal", "fault_injected", "error", "scene_graph", "verdict")


@dataclass
class NodeExec:
    """One execution of one graph node (a bar on the timeline)."""

    index: int
    node: str
    t_start: float
    attempt: int = 1
    run_count: int | None = None  # how many times this node has run for this subtask, this one included
    subtask_index: int | None = None
    span: str | None = None
    step: int | None = None
    t_end: float | None = None
    duration_s: float | None = None
    outcome: str = "running"  # ok | error | failed (a failing verdict) | running (no node_end yet)
    inputs: Any = None
    outputs: Any = None
    route: Any = None
    error: str | None = None
    llm_calls: list[dict[str, Any]] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    verdict: dict[str, Any] | None = None
    blamed_by: int | None = None  # index of the reflector execution that blamed this one
    followed_by: int | None = None  # index of the first execution that started after this one ended

    @property
    def label(self) -> str:
        return f"{self.node} #{self.attempt}"


@dataclass
class RunSummary:
    """What the run list shows about one run, plus its node executions for the timeline."""

    directory: Path
    run_id: str = ""
    task: str = ""
    instruction: str = ""
    seed: Any = None
    status: str = ""
    outcome: str = "running"  # success | failure | running (no run_end yet) | incomplete (no run_end, stale) | empty
    t_start: float | None = None
    t_end: float | None = None
    duration_s: float | None = None
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    n_events: int = 0
    node_execs: list[NodeExec] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    run_start: dict[str, Any] = field(default_factory=dict)
    run_end: dict[str, Any] = field(default_factory=dict)
    unattached: list[dict[str, Any]] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return bool(self.run_end)

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out


class TraceReader:
    """Incremental reader of one trace directory; safe to poll while a writer appends."""

    def __init__(self, directory: str | Path):
        self.dir = Path(directory)
        self.events: list[dict[str, Any]] = []
        self._offset = 0
        self._summary: RunSummary | None = None

    @property
    def path(self) -> Path:
        return self.dir / "events.jsonl"

    def refresh(self) -> int:
        """Read complete lines appended since the last call; returns how many events were added."""
        try:
            size = os.path.getsize(self.path)
        except OSError:
            return 0
        if size < self._offset:  # truncated or replaced: start again
            log.info("trace %s shrank; re-reading it", self.path)
            self.events, self._offset = [], 0
        if size == self._offset:
            return 0
        with open(self.path, "rb") as fh:
            fh.seek(self._offset)
            chunk = fh.read(size - self._offset)
        end = chunk.rfind(b"\n")
        if end < 0:
            return 0  # only a partial line so far
        added = 0
        for raw in chunk[: end + 1].splitlines():
            event = parse_event_line(raw.decode("utf-8", errors="replace"), str(self.path))
            if event is not None:
                self.events.append(event)
                added += 1
        self._offset += end + 1
        if added:
            self._summary = None
        return added

    def summary(self) -> RunSummary:
        """The run summary of everything read so far (refresh() first to pick up new events).

        A run without ``run_end`` is ``running`` while its file changed in the last ``STALE_AFTER_S`` seconds,
        else ``incomplete`` (killed or crashed).
        """
        if self._summary is None:
            self._summary = summarize_events(self.dir, self.events)
        run = self._summary
        if run.outcome in ("running", "incomplete"):
            try:
                age_s = time.time() - os.path.getmtime(self.path)
            except OSError:
                age_s = 0.0
            run.outcome = "incomplete" if age_s > STALE_AFTER_S else "running"
        return run


def load_run(directory: str | Path) -> RunSummary:
    """Read a trace directory once and summarise it."""
    reader = TraceReader(directory)
    reader.refresh()
    return reader.summary()


def summarize_events(directory: Path, events: list[dict[str, Any]]) -> RunSummary:
    """Build a ``RunSummary`` from events in file order."""
    run = RunSummary(directory=directory, n_events=len(events))
    if not events:
        run.outcome = "empty"
        return run
    run.run_id = str(events[0].get("run_id", ""))
    run.t_start = finite_number(events[0].get("t"))
    by_span: dict[str, NodeExec] = {}
    open_by_node: dict[str, list[NodeExec]] = {}
    t = run.t_start or 0.0
    for ev in events:
        kind = ev.get("kind")
        t = finite_number(ev.get("t")) or t  # an event without a usable time happened after the one before
        if kind == "run_start":
            run.run_start = ev
            run.task = str(ev.get("task") or "")
            run.instruction = str(ev.get("instruction") or "")
            run.seed = ev.get("seed")
            run.t_start = t
        elif kind == "run_end":
            run.run_end = ev
        elif kind == "node_start":
            ex = NodeExec(
                index=len(run.node_execs),
                node=str(ev.get("node", "?")),
                t_start=t,
                attempt=_int(ev.get("attempt")) or 1,
                subtask_index=_int(ev.get("subtask_index")),
                run_count=_int(ev.get("run_count")),
                span=_span(ev.get("span")),
                step=_int(ev.get("step")),
                inputs=ev.get("inputs"),
            )
            run.node_execs.append(ex)
            if ex.span:
                by_span[ex.span] = ex
            open_by_node.setdefault(ex.node, []).append(ex)
        elif kind == "node_end":
            ex_end = _match_end(ev, by_span, open_by_node)
            if ex_end is None:
                run.unattached.append(ev)
                continue
            ex_end.t_end = t
            ex_end.duration_s = finite_number(ev.get("duration_s"))
            if ex_end.duration_s is None:
                ex_end.duration_s = t - ex_end.t_start
            ex_end.outcome = str(ev.get("outcome") or "ok")
            ex_end.outputs = ev.get("outputs")
            ex_end.route = ev.get("route")
            ex_end.error = ev.get("error")
            artifacts = ev.get("artifacts")
            for rel in artifacts if isinstance(artifacts, list) else []:
                ex_end.artifacts.append({"kind": "artifact", "path": rel, "name": Path(str(rel)).stem, "meta": {}})
        elif kind == "llm_call":
            run.llm_calls += 1
            run.tokens_in += _int(ev.get("tokens_in")) or 0
            run.tokens_out += _int(ev.get("tokens_out")) or 0
            _attach(run, ev, by_span, "llm_calls")
        elif kind == "artifact":
            _attach(run, ev, by_span, "artifacts")
        elif kind in STEP_EVENT_KINDS:
            if kind == "verdict":
                run.verdicts.append(ev)
            _attach(run, ev, by_span, "events")
    _finish(run, events)
    return run


def _match_end(
    ev: dict[str, Any], by_span: dict[str, NodeExec], open_by_node: dict[str, list[NodeExec]]
) -> NodeExec | None:
    span = _span(ev.get("span"))
    if span and span in by_span:
        ex = by_span[span]
        pending = open_by_node.get(ex.node, [])
        if ex in pending:
            pending.remove(ex)
        return ex
    pending = open_by_node.get(str(ev.get("node", "?")), [])
    return pending.pop(0) if pending else None


def _attach(run: RunSummary, ev: dict[str, Any], by_span: dict[str, NodeExec], where: str) -> None:
    """Attach an event to its node execution: by span, else by node name and time, else by time alone."""
    span = _span(ev.get("span"))
    ex = by_span.get(span) if span else None
    if ex is None:
        ex = _exec_at(run.node_execs, finite_number(ev.get("t")) or 0.0, str(ev.get("node") or ""))
    if ex is None:
        run.unattached.append(ev)
        return
    getattr(ex, where).append(ev)
    if ev.get("kind") == "verdict" and ex.verdict is None:
        ex.verdict = ev


def _exec_at(execs: list[NodeExec], t: float, node: str) -> NodeExec | None:
    candidates = [ex for ex in execs if ex.t_start <= t and (not node or ex.node == node)]
    running = [ex for ex in candidates if ex.t_end is None or t <= ex.t_end]
    if running:
        return running[-1]
    return candidates[-1] if node and candidates else None


def _finish(run: RunSummary, events: list[dict[str, Any]]) -> None:
    last_t = finite_number(events[-1].get("t")) or run.t_start or 0.0
    if run.run_end:
        success = run.run_end.get("success")
        run.status = str(run.run_end.get("status") or "")
        run.outcome = "success" if success is True else "failure" if success is False else (run.status or "ended")
        run.t_end = finite_number(run.run_end.get("t"))
        run.duration_s = finite_number(run.run_end.get("wall_s"))
    else:
        run.outcome = "running"
        run.t_end = last_t
    if run.duration_s is None and run.t_start is not None:
        run.duration_s = (run.t_end or last_t) - run.t_start
    for ex in run.node_execs:
        if ex.t_end is not None:
            ex.followed_by = next((e.index for e in run.node_execs[ex.index + 1 :] if e.t_start >= ex.t_end), None)
        verdict = ex.verdict or _verdict_from_outputs(ex.outputs)
        if verdict is None:
            continue
        ex.verdict = verdict
        if not _verdict_ok(verdict) and ex.outcome == "ok":
            ex.outcome = "failed"
        blamed = verdict.get("blamed_agent")
        if blamed and not _verdict_ok(verdict):
            earlier = [e for e in run.node_execs[: ex.index] if e.node == blamed]
            if earlier and earlier[-1].blamed_by is None:
                earlier[-1].blamed_by = ex.index


def _verdict_from_outputs(outputs: Any) -> dict[str, Any] | None:
    if not isinstance(outputs, dict):
        return None
    return find_verdict(outputs)


def _verdict_ok(verdict: dict[str, Any]) -> bool:
    value = str(verdict.get("verdict", "")).lower()
    return value in ("ok", "success", "succeeded", "pass", "passed", "done", "true", "complete", "completed")


def finite_number(value: Any) -> float | None:
    """A finite number, else None (NaN, inf, text, a list... in a hand-edited or damaged trace)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer beyond float range
        return None
    return number if math.isfinite(number) else None


def _int(value: Any) -> int | None:
    number = finite_number(value)
    return int(number) if number is not None else None


def _span(value: Any) -> str | None:
    """A span id is a string (an integer is read as one); anything else is ignored."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None
