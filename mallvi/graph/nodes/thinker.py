"""Thinker node: the subtask plus localised objects -> the skill calls the Actor will run.

The backend gets the subtask's failed attempts (``failures``, graph/failure_memory.py). A plan that would still
repeat one of them unchanged is not run: it becomes a ``no_strategy`` stage error, as does the backend's own
``NoStrategyLeftError``, and the Reflector re-scans once or ends the run with a failure report saying so.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mallvi.graph.agent_errors import AgentError, NoStrategyLeftError
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.context import GraphContext
from mallvi.graph.failure_memory import repeats
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
    memory = state["failures"].get(str(state["subtask_index"]), [])
    try:
        plan = ctx.backends.thinker.think(current_subtask(state), state["localized"], scene,
                                          attempt_of(state), feedback, ctx, log, failed=failed, failures=memory)
    except NoStrategyLeftError as e:
        return {"action_plan": None, "llm_calls": log.records,
                "stage_error": StageError(agent="thinker", message=str(e), no_strategy=True)}
    except AgentError as e:
        return {"action_plan": None, "stage_error": StageError(agent="thinker", message=str(e)),
                "llm_calls": log.records}
    localized = state["localized"]
    bad = [c.object for c in plan.calls if c.object is not None and c.object not in localized]
    if bad:  # never execute a call on an object perception did not localise
        return {"action_plan": None, "llm_calls": log.records,
                "stage_error": StageError(agent="thinker", message=f"plan names unknown objects: {bad}")}
    again = repeats(plan.calls, localized, memory)
    if again is not None:  # never run an attempt that already failed, unchanged
        return {"action_plan": None, "llm_calls": log.records, "stage_error": StageError(
            agent="thinker", no_strategy=True,
            message=f"the plan repeats a failed attempt unchanged ({again.line()}) and no other was proposed")}
    return {"action_plan": plan, "llm_calls": log.records}
