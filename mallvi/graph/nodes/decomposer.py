"""Decomposer node: instruction -> typed subtasks and goal predicates (runs in parallel with the Descriptor)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mallvi.graph.agent_errors import AgentError, RefusalError
from mallvi.graph.backends.backend_protocols import MODEL_FAILURE, CallLog
from mallvi.graph.context import GraphContext
from mallvi.graph.state import GraphState


def decomposer(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    ctx = runtime.context
    log = CallLog()
    try:
        plan = ctx.backends.decomposer.decompose(state["instruction"], None, log)
    except RefusalError as e:
        return {"refusal": str(e), "refusal_cause": "input", "llm_calls": log.records}
    except AgentError as e:
        return {"refusal": f"{MODEL_FAILURE}{e}", "refusal_cause": "model", "llm_calls": log.records}
    if len(plan.subtasks) > ctx.budgets.max_subtasks:
        return {"refusal": f"the plan has {len(plan.subtasks)} subtasks, more than the budget of "
                           f"{ctx.budgets.max_subtasks}", "refusal_cause": "input", "llm_calls": log.records}
    return {"plan": plan, "llm_calls": log.records}
