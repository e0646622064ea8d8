"""Approve node: with human approval on, pause (LangGraph interrupt) before the Actor: approve, edit or abort."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from mallvi.graph.context import GraphContext
from mallvi.graph.nodes.common import current_subtask
from mallvi.graph.schemas import ActionPlan
from mallvi.graph.state import GraphState


def approve(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    if not runtime.context.approve:
        return {}
    plan = state["action_plan"]
    decision = interrupt({
        "subtask": current_subtask(state).text,
        "calls": [c.model_dump(mode="json") for c in plan.calls] if plan else [],
        "choices": ["approve", "edit", "abort"],
    })
    if isinstance(decision, dict) and decision.get("action") == "edit":
        edited = ActionPlan.model_validate(decision.get("plan", {}))
        return {"action_plan": edited}
    if decision == "approve" or (isinstance(decision, dict) and decision.get("action") == "approve"):
        return {}
    return {"status": "aborted", "failure_report": None}
