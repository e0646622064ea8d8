"""Helpers shared by the node functions: timing records, progress lines, reference bookkeeping."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

from mallvi.graph.context import GraphContext
from mallvi.graph.schemas import NodeRecord, Subtask
from mallvi.graph.state import GraphState

NodeFn = Callable[[GraphState, Runtime[GraphContext]], dict[str, Any]]


def timed(name: str, fn: NodeFn) -> NodeFn:
    """Wrap a node: adds a NodeRecord (duration) to ``trail`` and reports progress through the context."""

    def run(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        idx = state["subtask_index"]
        attempt = state["attempts"].get(str(idx), 0) + 1
        ctx = runtime.context
        if ctx.on_progress is not None:
            ctx.on_progress(f"{name} (subtask {idx}, attempt {attempt})")
        t0 = time.perf_counter()
        update = fn(state, runtime)
        dt = time.perf_counter() - t0
        outcome = "error" if update.get("stage_error") else "ok"
        update["trail"] = [NodeRecord(node=name, subtask_index=idx, attempt=attempt, duration_s=dt, outcome=outcome)]
        return update

    run.__name__ = name
    return run


def current_subtask(state: GraphState) -> Subtask:
    plan = state["plan"]
    idx = state["subtask_index"]
    if plan is None or idx >= len(plan.subtasks):
        raise RuntimeError("no current subtask")  # the router never sends us here then
    return plan.subtasks[idx]


def attempt_of(state: GraphState) -> int:
    """0-based attempt number of the current subtask."""
    return int(state["attempts"].get(str(state["subtask_index"]), 0))
