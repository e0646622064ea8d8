"""Perceptor node: which scene objects the current subtask involves (targets first, the rest as context)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mallvi.graph.agent_errors import AgentError
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.context import GraphContext
from mallvi.graph.nodes.common import current_subtask
from mallvi.graph.schemas import StageError
from mallvi.graph.state import GraphState


def perceptor(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    ctx = runtime.context
    log = CallLog()
    scene = state["scene"]
    assert scene is not None  # dispatch guarantees it
    try:
        focus = ctx.backends.perceptor.focus(current_subtask(state), state["bindings"], scene, log)
    except AgentError as e:
        return {"stage_error": StageError(agent="perceptor", message=str(e)), "llm_calls": log.records}
    known = {o.id for o in scene.objects}
    unknown = [f for f in focus if f not in known]
    if unknown or not focus:
        msg = f"perceptor named objects not in the scene: {unknown}" if unknown else "perceptor chose no object"
        return {"stage_error": StageError(agent="perceptor", message=msg, lost=bool(unknown)),
                "llm_calls": log.records}
    return {"focus": focus, "stage_error": None, "llm_calls": log.records, "retry_from": None}
