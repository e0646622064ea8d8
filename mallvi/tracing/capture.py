"""Capture a trace from the graph itself: a LangChain callback handler for LangGraph runs.

Pass it in the run config and every graph node execution and chat-model call is traced, with no
trace calls in the agents::

    writer = TraceWriter(trace_dir)
    graph.invoke(state, config={"callbacks": [TraceCallbackHandler(writer)]})

Node executions are recognised by LangGraph's callback metadata (``metadata["langgraph_node"]`` equal to the
run's name); chat-model calls are attributed to the node whose run they are nested in.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from mallvi.tracing.summarize import content_text, message_to_dict, summarize
from mallvi.tracing.trace import TraceWriter

log = logging.getLogger(__name__)

#: State keys tried, in order, for the index of the subtask being worked on.
SUBTASK_INDEX_KEYS = ("subtask_index", "current_subtask_index", "current_index", "subtask_idx", "cursor")
#: State keys tried, in order, for per-subtask failed-attempt counters (an int, or a list/dict by subtask index).
ATTEMPT_COUNTER_KEYS = ("attempts", "attempt_counts", "attempt_counters", "retries", "failures")


def subtask_index_from_state(state: Any) -> int | None:
    """The current subtask index of a graph state, or None when the state does not say."""
    data = _as_mapping(state)
    for key in SUBTASK_INDEX_KEYS:
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    current = _as_mapping(data.get("current_subtask"))
    value = current.get("index")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def attempt_from_state(state: Any, subtask_index: int | None = None) -> int | None:
    """The 1-based attempt number a node is on, read from the graph state, or None when the state has none.

    ``state["attempt"]`` (an int) is taken as the attempt number itself. The counters in
    ``ATTEMPT_COUNTER_KEYS`` count failed attempts of a subtask so far, so the attempt is counter + 1; a counter
    may be an int, a list indexed by subtask, or a dict keyed by subtask index (int or str).
    """
    data = _as_mapping(state)
    direct = data.get("attempt")
    if isinstance(direct, int) and not isinstance(direct, bool):
        return direct
    if subtask_index is None:
        subtask_index = subtask_index_from_state(data)
    for key in ATTEMPT_COUNTER_KEYS:
        value = data.get(key)
        count: Any = None
        if isinstance(value, int) and not isinstance(value, bool):
            count = value
        elif isinstance(value, Sequence) and not isinstance(value, str) and subtask_index is not None:
            count = value[subtask_index] if 0 <= subtask_index < len(value) else 0
        elif isinstance(value, Mapping) and subtask_index is not None:
            count = value.get(subtask_index, value.get(str(subtask_index), 0))
        if isinstance(count, int) and not isinstance(count, bool):
            return count + 1
    return None


_VERDICT_ALIASES = {
    "blamed_agent": ("blamed_agent", "blame", "blamed", "agent_to_retry"),
    "failure_category": ("failure_category", "category", "failure_type"),
    "explanation": ("explanation", "reason", "rationale"),
}


def find_verdict(outputs: Any) -> dict[str, Any] | None:
    """A Reflector verdict in a node's output, normalised, or None.

    Looks at the output itself, then one level down (e.g. ``outputs["reflection"]``; for a list, its last
    item). A verdict is a mapping with a ``verdict`` key; ``blamed_agent``/``failure_category``/``explanation``
    are read with a few aliases (``blame``, ``category``, ``reason``).
    """
    data = _as_mapping(outputs)
    candidates: list[Any] = [data]
    for value in data.values():
        if isinstance(value, list) and value:
            value = value[-1]
        candidates.append(value)
    for candidate in candidates:
        found = _as_mapping(candidate)
        if not isinstance(found.get("verdict"), str | bool):  # e.g. {"verdict": Verdict(...)}: look one level down
            continue
        verdict: dict[str, Any] = {"verdict": summarize(found["verdict"], max_str=200)}
        for name, aliases in _VERDICT_ALIASES.items():
            verdict[name] = next((summarize(found[a]) for a in aliases if found.get(a) is not None), None)
        return verdict
    return None


@dataclass
class _NodeSpan:
    node: str
    span: str
    t0: float
    subtask_index: int | None
    attempt: int
    route: Any = None


@dataclass
class _LlmCall:
    node: str
    span: str | None
    t0: float
    model: str
    prompt: list[dict[str, Any]]


class TraceCallbackHandler(BaseCallbackHandler):
    """Writes node_start/node_end, llm_call and verdict events for a LangGraph run.

    Args:
        writer: where events go.
        max_str: longest string kept in the summarised inputs/outputs of a node.
        include_subgraphs: also trace nodes of nested subgraphs (default: the top-level graph only).
    """

    raise_error = False  # a tracing problem must never stop the robot
    run_inline = True  # in async runs too, so events keep their order (each is one short file write)

    def __init__(self, writer: TraceWriter, *, max_str: int = 2000, include_subgraphs: bool = False):
        self.writer = writer
        self.max_str = max_str
        self.include_subgraphs = include_subgraphs
        self._lock = threading.Lock()
        self._spans: dict[UUID, _NodeSpan] = {}
        self._owner: dict[UUID, UUID] = {}  # nested run -> the node run it belongs to
        self._llm: dict[UUID, _LlmCall] = {}
        self._runs: dict[tuple[str, int | None], int] = {}

    # -- graph nodes -------------------------------------------------------------------------------------------
    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = kwargs.get("name") or (serialized or {}).get("name")
        node = (metadata or {}).get("langgraph_node")
        with self._lock:
            owner = self._owner_of(parent_run_id)
            if not self._is_node_run(name, node, metadata, owner):
                if owner is not None:
                    self._owner[run_id] = owner
                return
            subtask_index = subtask_index_from_state(inputs)
            key = (str(node), subtask_index)
            self._runs[key] = self._runs.get(key, 0) + 1
            run_count = self._runs[key]
            attempt = attempt_from_state(inputs, subtask_index) or run_count
            span = _NodeSpan(str(node), uuid.uuid4().hex[:12], time.perf_counter(), subtask_index, attempt)
            self._spans[run_id] = span
        self.writer.emit(
            "node_start",
            node=span.node,
            attempt=attempt,
            subtask_index=subtask_index,
            run_count=run_count,
            span=span.span,
            step=(metadata or {}).get("langgraph_step"),
            inputs=summarize(inputs, max_str=self.max_str) if getattr(self.writer, "keep_state", True) else None,
        )

    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        with self._lock:
            span = self._spans.pop(run_id, None)
            if span is None:
                self._note_route(run_id, parent_run_id, outputs)
                return
        goto = getattr(outputs, "goto", None)  # a langgraph Command
        if goto is not None:
            span.route = summarize(goto)
            outputs = getattr(outputs, "update", None)
        duration_s = time.perf_counter() - span.t0
        self.writer.emit(
            "node_end",
            node=span.node,
            attempt=span.attempt,
            subtask_index=span.subtask_index,
            span=span.span,
            duration_s=round(duration_s, 6),
            outcome="ok",
            route=span.route,
            outputs=summarize(outputs, max_str=self.max_str),
        )
        verdict = find_verdict(outputs)
        if verdict is not None:
            self.writer.emit(
                "verdict", node=span.node, subtask_index=span.subtask_index, route_to=span.route, **verdict
            )

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            span = self._spans.pop(run_id, None)
            self._owner.pop(run_id, None)
        if span is None:
            return
        interrupted = "Interrupt" in type(error).__name__
        message = f"{type(error).__name__}: {error}"
        self.writer.emit(
            "node_end",
            node=span.node,
            attempt=span.attempt,
            subtask_index=span.subtask_index,
            span=span.span,
            duration_s=round(time.perf_counter() - span.t0, 6),
            outcome="interrupted" if interrupted else "error",
            error=summarize(message),
        )
        if not interrupted:
            self.writer.emit("error", where=span.node, message=summarize(message))

    # -- model calls -------------------------------------------------------------------------------------------
    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        prompt = [message_to_dict(m) for batch in messages for m in batch]
        self._start_llm(run_id, parent_run_id, metadata, kwargs, prompt)

    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._start_llm(run_id, parent_run_id, metadata, kwargs, [{"role": "prompt", "content": p} for p in prompts])

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            call = self._llm.pop(run_id, None)
        if call is None:
            return
        text, model, tokens_in, tokens_out = _read_llm_result(response)
        self.writer.emit(
            "llm_call",
            node=call.node,
            span=call.span,
            model=model or call.model,
            prompt=call.prompt,
            response=text,
            latency_s=round(time.perf_counter() - call.t0, 6),
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            error=None,
        )

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            call = self._llm.pop(run_id, None)
        if call is None:
            return
        self.writer.emit(
            "llm_call",
            node=call.node,
            span=call.span,
            model=call.model,
            prompt=call.prompt,
            response=None,
            latency_s=round(time.perf_counter() - call.t0, 6),
            tokens_in=None,
            tokens_out=None,
            error=summarize(f"{type(error).__name__}: {error}"),
        )

    # -- helpers -----------------------------------------------------------------------------------------------
    def _start_llm(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        metadata: dict[str, Any] | None,
        kwargs: dict[str, Any],
        prompt: list[dict[str, Any]],
    ) -> None:
        params = kwargs.get("invocation_params") or {}
        model = str(params.get("model_name") or params.get("model") or (metadata or {}).get("ls_model_name") or "")
        with self._lock:
            owner = self._owner_of(parent_run_id)
            span = self._spans.get(owner) if owner is not None else None
            node = span.node if span else str((metadata or {}).get("langgraph_node") or "")
            self._llm[run_id] = _LlmCall(node, span.span if span else None, time.perf_counter(), model, prompt)

    def _owner_of(self, run_id: UUID | None) -> UUID | None:
        if run_id is None:
            return None
        if run_id in self._spans:
            return run_id
        return self._owner.get(run_id)

    def _is_node_run(self, name: Any, node: Any, metadata: dict[str, Any] | None, owner: UUID | None) -> bool:
        if not node or name != node or str(node).startswith("__"):
            return False
        if owner is not None and not self.include_subgraphs:  # nested inside another node: a subgraph's node
            return False
        ns = str((metadata or {}).get("langgraph_checkpoint_ns", ""))
        return self.include_subgraphs or "|" not in ns

    def _note_route(self, run_id: UUID, parent_run_id: UUID | None, outputs: Any) -> None:
        """A direct child of a node that returns node names is the node's conditional-edge router."""
        self._owner.pop(run_id, None)
        span = self._spans.get(parent_run_id) if parent_run_id is not None else None
        if span is None:
            return
        if isinstance(outputs, str):
            span.route = outputs
        elif isinstance(outputs, list | tuple) and outputs and all(isinstance(o, str) for o in outputs):
            span.route = list(outputs)
        elif hasattr(outputs, "node") and hasattr(outputs, "arg"):  # a langgraph Send
            span.route = str(outputs.node)


def _read_llm_result(response: Any) -> tuple[str, str, int | None, int | None]:
    text, model = "", ""
    tokens_in: int | None = None
    tokens_out: int | None = None
    llm_output = getattr(response, "llm_output", None) or {}
    usage = llm_output.get("token_usage") or llm_output.get("usage") or {}
    if usage:
        tokens_in, tokens_out = usage.get("prompt_tokens"), usage.get("completion_tokens")
    model = str(llm_output.get("model_name") or llm_output.get("model") or "")
    generations = getattr(response, "generations", None) or []
    for batch in generations:
        for gen in batch:
            message = getattr(gen, "message", None)
            text += content_text(getattr(message, "content", None) if message is not None else gen.text)
            meta = getattr(message, "usage_metadata", None) or {}
            if meta and tokens_in is None:
                tokens_in, tokens_out = meta.get("input_tokens"), meta.get("output_tokens")
            response_meta = getattr(message, "response_metadata", None) or {}
            model = model or str(response_meta.get("model_name") or response_meta.get("model") or "")
    return text, model, tokens_in, tokens_out


def _as_mapping(value: Any) -> Mapping[str, Any]:
    if isinstance(value, Mapping):
        return value
    if hasattr(value, "model_dump") and callable(value.model_dump):
        try:
            dumped = value.model_dump()
        except Exception:
            return {}
        return dumped if isinstance(dumped, Mapping) else {}
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return vars(value)
    return {}
