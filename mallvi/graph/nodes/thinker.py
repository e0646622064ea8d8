"""Thinker node: the subtask plus localised objects -> the skill calls the Actor will run."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mallvi.graph.backends.base import AgentError, CallLog
from mallvi.graph.context import GraphContext
from mallvi.graph.nodes.common import attempt_of, current_subtask
from mallvi.graph.schemas import StageError
from mallvi.graph.state import GraphState


def thinker(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    ctx = runtime.context
    log = CallLog()
    scene = state["scene"]
    assert scene is not None
    history = state["history"]
    feedback = history[-1].explanation if history else None
    failed = history[-1].failed_step if history else None  # the failed call and its kind, for routing
    try:
        plan = ctx.backends.thinker.think(current_subtask(state), state["localized"], scene,
                                          attempt_of(state), feedback, ctx, log, failed=failed)
    except AgentError as e:
        return {"action_plan": None, "stage_error": StageError(agent="thinker", message=str(e)),
                "llm_calls": log.records}
    localized = state["localized"]
    bad = [c.object for c in plan.calls if c.object is not None and c.object not in localized]
    if bad:  # never execute a call on an object perception did not localise
        return {"action_plan": None, "llm_calls": log.records,
                "stage_error": StageError(agent="thinker", message=f"plan names unknown objects: {bad}")}
    return {"action_plan": plan, "llm_calls": log.records}
