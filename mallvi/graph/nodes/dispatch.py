"""Dispatch node: joins Decomposer and Descriptor, binds references to the scene, and picks the next subtask."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mallvi.graph.agent_errors import RefusalError
from mallvi.graph.binding import bind_plan, prepare_plan
from mallvi.graph.context import GraphContext
from mallvi.graph.state import GraphState


def dispatch(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    if state["refusal"] or state["status"] != "running":
        return {"status": "refused"} if state["refusal"] else {}
    plan, scene = state["plan"], state["scene"]
    if plan is None or scene is None:
        return {"refusal": "no plan or no scene description", "status": "refused"}
    started = bool(state["completed"]) or bool(state["attempts"])
    previous = state["bindings"] or None
    try:
        if started:
            bindings = bind_plan(plan, scene, previous)
        else:
            plan, bindings = prepare_plan(plan, scene)
    except RefusalError as e:
        if not started:
            return {"refusal": str(e), "status": "refused"}
        bindings = previous or {}
    update: dict[str, Any] = {"plan": plan, "bindings": bindings, "stage_error": None, "retry_from": None}
    if state["subtask_index"] >= len(plan.subtasks):
        update["status"] = "succeeded"
    return update
