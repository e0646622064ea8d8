"""Read a trace back: an index of ``events.jsonl`` built once and extended as the run grows, and a run summary.

``load_run(dir)`` reads a finished or growing trace once; ``TraceReader(dir)`` keeps its place in
``events.jsonl`` and, on each ``refresh()``, reads only what was appended since (complete lines only),
so a viewer can poll a run that is still being written.

The index keeps each event's small fields and where its line lies in the file, not its bulk: a node's
``inputs``/``outputs``, an LLM call's ``prompt``/``response`` and any string longer than ``INLINE_STR_CHARS`` are
read back from the file when a page needs them (``event_field``, ``NodeExec.inputs``), so a 50 MB trace is held
in a few MB. A line that cannot be read (too long, not UTF-8, nested too deep, a number of thousands of digits,
not JSON) is skipped and listed in ``RunSummary.problems``; the rest of the run still shows.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from mallvi.logviz.scene_data import scene_graph_in
from mallvi.tracing.capture import find_verdict
from mallvi.tracing.jsonl import LineProblem, iter_raw_lines, open_regular, parse_json_bytes, parse_line

log = logging.getLogger(__name__)

#: A run without run_end whose file has not changed for this long is shown as incomplete, not running.
STALE_AFTER_S = 300.0

#: Event kinds attached to the node execution during which they happened.
STEP_EVENT_KINDS = ("actor_command", "safety_refusal", "fault_injected", "error", "scene_graph", "verdict")

#: per kind, the fields the index leaves in the file (read back on demand)
BULK_FIELDS: dict[str, tuple[str, ...]] = {
    "node_start": ("inputs",),
    "node_end": ("outputs",),
    "llm_call": ("prompt", "response"),
}
#: a string field longer than this is cut in the index (the whole of it stays in the file)
INLINE_STR_CHARS = 4000
#: index keys: where the event's line lies (offset, length) and which of its fields are not (wholly) in the index
REF_KEY = "_ref"
LEFT_OUT_KEY = "_left_out"
#: index keys derived from the bulk when it was read: the Reflector verdict and a scene graph in it
VERDICT_KEY = "_verdict"
SCENE_GRAPH_KEY = "_scene_graph"

#: a run's outcome for each graph status that is not a judged success or failure
STATUS_OUTCOMES = {"planned": "planned", "paused": "paused"}


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
    start_event: dict[str, Any] = field(default_factory=dict, repr=False)
    end_event: dict[str, Any] | None = field(default=None, repr=False)
    trace_dir: Path | None = None
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

    @property
    def inputs(self) -> Any:
        """The summarised input state (read from the trace file when the index left it there)."""
        return event_field(self.start_event, "inputs", self.trace_dir)

    @property
    def outputs(self) -> Any:
        """The summarised state update (None while the node runs)."""
        return event_field(self.end_event, "outputs", self.trace_dir) if self.end_event is not None else None

    def scene_graph(self, include_inputs: bool) -> dict[str, Any] | None:
        """A scene graph in this execution's outputs (or, asked for, its inputs), found when it was indexed."""
        for ev, name in ((self.end_event, "outputs"), (self.start_event if include_inputs else None, "inputs")):
            if ev is None:
                continue
            found = ev.get(SCENE_GRAPH_KEY) if SCENE_GRAPH_KEY in ev else scene_graph_in(ev.get(name))
            if found is not None:
                return found
        return None


@dataclass
class RunSummary:
    """What the run list shows about one run, plus its node executions for the timeline."""

    directory: Path
    run_id: str = ""
    task: str = ""
    graph_status: str = ""  # what the graph itself reported (run_end.status), beside the judged outcome
    instruction: str = ""
    seed: Any = None
    status: str = ""
    # judged: success | failure; planned (a dry run) | paused (waits for --resume); running (no run_end yet) |
    # incomplete (no run_end, stale) | empty | unreadable
    outcome: str = "running"
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
    problems: list[LineProblem] = field(default_factory=list)  # lines of events.jsonl that were skipped
    videos: list[dict[str, Any]] = field(default_factory=list)  # ``video`` events: a camera's recording

    @property
    def finished(self) -> bool:
        return bool(self.run_end)

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    @property
    def judged(self) -> bool | None:
        """``run_end.success``: the run judged from the scene (simulator truth), None when not said."""
        success = self.run_end.get("success") if self.run_end else None
        return success if isinstance(success, bool) else None

    def event_value(self, event: dict[str, Any], name: str) -> Any:
        """One field of one of this run's events, read from the trace file when the index left it there."""
        return event_field(event, name, self.directory)


class TraceReader:
    """Incremental index of one trace directory; safe to poll while a writer appends, and from several threads."""

    def __init__(self, directory: str | Path):
        self.dir = Path(directory)
        self.events: list[dict[str, Any]] = []  # indexed events: small fields, and where the rest lies
        self.problems: list[LineProblem] = []
        self._offset = 0
        self._next_line = 1
        self._identity: tuple[int, int] | None = None
        self._summary: RunSummary | None = None
        self._lock = threading.RLock()

    @property
    def path(self) -> Path:
        return self.dir / "events.jsonl"

    def refresh(self) -> int:
        """Index complete lines appended since the last call; returns how many events were added."""
        with self._lock:
            try:
                fh = open_regular(self.path)
            except OSError:
                return 0
            with fh:
                st = os.fstat(fh.fileno())
                identity = (st.st_dev, st.st_ino)
                if st.st_size < self._offset or (self._identity is not None and identity != self._identity):
                    log.info("trace %s shrank or was replaced; re-reading it", self.path)
                    self.events, self.problems, self._offset, self._next_line = [], [], 0, 1
                    self._summary = None
                self._identity = identity
                if st.st_size == self._offset:
                    return 0
                added = 0
                for line in iter_raw_lines(fh, start_offset=self._offset, first_number=self._next_line):
                    if not line.complete:
                        break  # the writer is mid-line (or was killed there): wait for the rest
                    self._offset, self._next_line = line.offset + line.length, line.number + 1
                    record, problem = parse_line(line)
                    if problem is None and record is not None and "kind" not in record:
                        problem = LineProblem(line.number, "an event without a kind")
                    if problem is not None:
                        log.warning("skipping %s %s", self.path, problem)
                        self.problems.append(problem)
                        self._summary = None
                    elif record is not None:
                        self.events.append(index_event(record, line.offset, line.length))
                        added += 1
            if added:
                self._summary = None
            return added

    def summary(self) -> RunSummary:
        """The run summary of everything read so far (refresh() first to pick up new events).

        A run without ``run_end`` is ``running`` while its file changed in the last ``STALE_AFTER_S`` seconds,
        else ``incomplete`` (killed or crashed).
        """
        with self._lock:
            if self._summary is None:
                self._summary = summarize_events(self.dir, self.events)
                self._summary.problems = list(self.problems)
            run = self._summary
        if run.outcome in ("running", "incomplete"):
            try:
                age_s = time.time() - os.path.getmtime(self.path)
            except OSError:
                age_s = 0.0
            run.outcome = "incomplete" if age_s > STALE_AFTER_S else "running"
        return run


def index_event(event: dict[str, Any], offset: int, length: int) -> dict[str, Any]:
    """What the index keeps of one event read from ``offset`` (``length`` bytes) of ``events.jsonl``."""
    kind = event.get("kind")
    bulk = BULK_FIELDS.get(kind if isinstance(kind, str) else "", ())
    kept: dict[str, Any] = {}
    left_out: list[str] = []
    for name, value in event.items():
        if name in bulk:
            left_out.append(name)
        elif isinstance(value, str) and len(value) > INLINE_STR_CHARS:
            kept[name] = value[:INLINE_STR_CHARS]
            left_out.append(name)
        else:
            kept[name] = value
    if kind == "node_end":
        outputs = event.get("outputs")
        kept[VERDICT_KEY] = find_verdict(outputs) if isinstance(outputs, dict) else None
        kept[SCENE_GRAPH_KEY] = scene_graph_in(outputs)
    elif kind == "node_start":
        kept[SCENE_GRAPH_KEY] = scene_graph_in(event.get("inputs"))
    if left_out:
        kept[REF_KEY] = (offset, length)
        kept[LEFT_OUT_KEY] = tuple(left_out)
    return kept


def event_field(event: dict[str, Any] | None, name: str, trace_dir: Path | None) -> Any:
    """Field ``name`` of an event: from the index, or read back from the trace file when the index left it there.

    Falls back to what the index holds (a cut string, or None) when the file no longer holds that line.
    """
    if event is None:
        return None
    if name not in event.get(LEFT_OUT_KEY, ()):
        return event.get(name)
    ref = event.get(REF_KEY)
    if trace_dir is None or not isinstance(ref, tuple):
        return event.get(name)
    full = read_event_at(trace_dir / "events.jsonl", ref[0], ref[1])
    if full is None or full.get("seq") != event.get("seq"):
        return event.get(name)
    return full.get(name)


def full_event(event: dict[str, Any], trace_dir: Path | None) -> dict[str, Any]:
    """An event with every field, the ones the index left in the file read back."""
    out = {k: v for k, v in event.items() if k not in (REF_KEY, LEFT_OUT_KEY, VERDICT_KEY, SCENE_GRAPH_KEY)}
    for name in event.get(LEFT_OUT_KEY, ()):
        out[name] = event_field(event, name, trace_dir)
    return out


def read_event_at(path: Path, offset: int, length: int) -> dict[str, Any] | None:
    """The event on the line at ``offset`` of ``path``, or None when it cannot be read back."""
    try:
        with open_regular(path) as fh:
            fh.seek(offset)
            data = fh.read(length)
    except OSError as e:
        log.warning("cannot read back %s at %d: %s", path, offset, e)
        return None
    value, problem = parse_json_bytes(data)
    return value if problem is None and isinstance(value, dict) else None


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
                start_event=ev,
                trace_dir=directory,
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
            ex_end.end_event = ev
            ex_end.route = ev.get("route")
            error = ev.get("error")
            ex_end.error = None if error is None else str(error)  # cut to INLINE_STR_CHARS; whole: event_field
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
        elif kind == "video":
            run.videos.append(ev)
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
    """The latest execution (of ``node``, if given) running at ``t``; else, for a named node, its latest start
    before ``t``. Searched from the newest, where a live event almost always belongs."""
    latest_started: NodeExec | None = None
    for ex in reversed(execs):
        if ex.t_start > t or (node and ex.node != node):
            continue
        if ex.t_end is None or t <= ex.t_end:
            return ex
        if latest_started is None:
            latest_started = ex
    return latest_started if node else None


def _finish(run: RunSummary, events: list[dict[str, Any]]) -> None:
    last_t = finite_number(events[-1].get("t")) or run.t_start or 0.0
    if run.run_end:
        run.status = str(run.run_end.get("status") or "")
        run.graph_status = run.status
        run.outcome = run_outcome(run.run_end.get("success"), run.status)
        run.t_end = finite_number(run.run_end.get("t"))
        run.duration_s = finite_number(run.run_end.get("wall_s"))
    else:
        run.outcome = "running"
        run.t_end = last_t
    if run.duration_s is None and run.t_start is not None:
        run.duration_s = (run.t_end or last_t) - run.t_start
    last_by_node: dict[str, NodeExec] = {}
    for ex in run.node_execs:
        if ex.t_end is not None:
            t_end = ex.t_end
            ex.followed_by = next((e.index for e in islice(run.node_execs, ex.index + 1, None) if e.t_start >= t_end),
                                  None)
        verdict = ex.verdict or _verdict_of(ex)
        if verdict is not None:
            ex.verdict = verdict
            if not _verdict_ok(verdict) and ex.outcome == "ok":
                ex.outcome = "failed"
            blamed = verdict.get("blamed_agent")
            if blamed and not _verdict_ok(verdict):
                earlier = last_by_node.get(str(blamed))
                if earlier is not None and earlier.blamed_by is None:
                    earlier.blamed_by = ex.index
        last_by_node[ex.node] = ex


def run_outcome(success: Any, status: str) -> str:
    """A finished run's outcome: ``planned``/``paused`` for a dry run and a paused one (neither is judged a
    failure), else ``success``/``failure`` as judged (``run_end.success``), else the graph's status."""
    if status in STATUS_OUTCOMES:
        return STATUS_OUTCOMES[status]
    if success is True:
        return "success"
    if success is False:
        return "failure"
    return status or "ended"


def _verdict_of(ex: NodeExec) -> dict[str, Any] | None:
    end = ex.end_event
    if end is None:
        return None
    if VERDICT_KEY in end:
        found = end[VERDICT_KEY]
        return found if isinstance(found, dict) else None
    return _verdict_from_outputs(end.get("outputs"))


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
