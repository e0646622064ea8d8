"""The single-agent baseline (MALLVi's ablation): one planner call per step, no per-step perception, no Reflector.

``planner -> actor -> planner -> ... -> END``. With the rules backend the planner is the instruction grammar plus
the geometric Thinker working on one initial scan (object positions are then tracked from its own targets); with
the llm backend it is one prompt per step (image, objects, history) answering the next skill calls or "done".
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.callbacks import BaseCallbackHandler
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel

from mallvi.graph.agent_errors import AgentError, RefusalError
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.llm.agents import LlmDecomposer
from mallvi.graph.backends.llm.client import LlmClient, load_prompt
from mallvi.graph.backends.rules.thinker.thinker import RulesThinker
from mallvi.graph.binding import prepare_plan
from mallvi.graph.context import GraphContext
from mallvi.graph.drive import GraphOutcome, summarise
from mallvi.graph.nodes.actor import actor
from mallvi.graph.nodes.common import timed
from mallvi.graph.schemas import ActionPlan, FailureReport, SceneMemory, SceneObject, SkillCall
from mallvi.graph.state import GraphState, initial_state


class SingleAgentAnswer(BaseModel):
    done: bool = False
    calls: list[SkillCall] = []


def _first_scan(state: GraphState, ctx: GraphContext) -> dict[str, Any]:
    obs = ctx.observe()
    objects = ctx.perception.scan(obs)
    scene = SceneMemory(objects=objects, initial=list(objects))
    return {"scene": scene, "localized": {o.id: o for o in objects},
            "image_ids": [ctx.artifacts.put("single_agent_scan", obs.rgb, node="planner")]}


def planner(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    ctx = runtime.context
    log = CallLog()
    update: dict[str, Any] = {}
    if state["scene"] is None:
        update.update(_first_scan(state, ctx))
    scene: SceneMemory = update.get("scene") or state["scene"]  # type: ignore[assignment]
    localized: dict[str, SceneObject] = dict(update.get("localized") or state["localized"])
    report = state["actor_report"]
    if report is not None and not report.ok:
        return {**update, "status": "failed", "llm_calls": log.records}
    llm = getattr(ctx.backends.thinker, "client", None)
    try:
        if isinstance(llm, LlmClient):
            return {**update, **_llm_step(state, ctx, llm, scene, localized, log), "llm_calls": log.records}
        return {**update, **_rules_step(state, ctx, scene, localized, log), "llm_calls": log.records}
    except RefusalError as e:
        return {**update, "refusal": str(e), "status": "refused", "llm_calls": log.records}
    except AgentError as e:
        idx = state["subtask_index"]
        return {**update, "status": "failed", "llm_calls": log.records, "action_plan": None,
                "failure_report": FailureReport(subtask_index=idx, subtask=None, reason=str(e), attempts=1)}


def _rules_step(state: GraphState, ctx: GraphContext, scene: SceneMemory, localized: dict[str, SceneObject],
                log: CallLog) -> dict[str, Any]:
    plan = state["plan"]
    idx = state["subtask_index"]
    if plan is None:
        plan = ctx.backends.decomposer.decompose(state["instruction"], scene, log)
        plan, _ = prepare_plan(plan, scene)
        idx = -1
    elif state["action_plan"] is not None:  # the last step ran: track moved objects from its own targets
        localized = _track(localized, state["action_plan"])
    idx += 1
    if idx >= len(plan.subtasks):
        return {"plan": plan, "subtask_index": idx, "status": "succeeded", "completed": list(range(idx)),
                "localized": localized}
    action = RulesThinker().think(plan.subtasks[idx], localized, scene, 0, None, ctx, log)
    return {"plan": plan, "subtask_index": idx, "action_plan": action, "localized": localized}


def _track(localized: dict[str, SceneObject], action: ActionPlan) -> dict[str, SceneObject]:
    out = dict(localized)
    for c in action.calls:
        if c.skill == "place_actor" and c.object in out and c.target_pose:
            o = out[c.object]
            x, y, z = c.target_pose[:3]
            out[c.object] = o.model_copy(update={"position_m": (x, y, z + o.size_m[2] / 2)})
    return out


def _llm_step(state: GraphState, ctx: GraphContext, llm: LlmClient, scene: SceneMemory,
              localized: dict[str, SceneObject], log: CallLog) -> dict[str, Any]:
    from mallvi.graph.backends.llm.agents import _objects_json

    plan = state["plan"]
    if plan is None and isinstance(ctx.backends.decomposer, LlmDecomposer):
        plan = None  # the single agent plans everything itself; no separate decomposition
    obs = ctx.observe()
    last = state["actor_report"]
    history = [c.model_dump() for c in (last.commands if last is not None else [])]

    def check(a: SingleAgentAnswer) -> None:
        bad = [c.object for c in a.calls if c.object is not None and c.object not in localized]
        if bad:
            raise ValueError(f"objects {bad} do not exist; use only {sorted(localized)}")
        if not a.done and not a.calls:
            raise ValueError("give calls or done=true")

    user = (f"Instruction: {state['instruction']}\nObjects: {_objects_json(localized)}\n"
            f"Table top z: {ctx.table_top_z:.3f}\nExecuted so far: {history}")
    a = llm.ask("single_agent", load_prompt("single_agent"), user, SingleAgentAnswer, log, images=[obs.rgb],
                check=check)
    idx = state["subtask_index"] + 1
    if a.done:
        return {"status": "succeeded", "subtask_index": idx, "completed": list(range(idx))}
    return {"action_plan": ActionPlan(calls=a.calls), "subtask_index": idx}


def after_planner(state: GraphState) -> Literal["actor", "__end__"]:
    return "actor" if state["status"] == "running" else "__end__"


def build_single_agent_graph() -> Any:
    g: StateGraph[Any, Any, Any, Any] = StateGraph(GraphState, context_schema=GraphContext)
    g.add_node("planner", timed("planner", planner))  # type: ignore[call-overload]
    g.add_node("actor", timed("actor", actor))  # type: ignore[call-overload]
    g.add_edge(START, "planner")
    g.add_conditional_edges("planner", after_planner, {"actor": "actor", END: END})
    g.add_edge("actor", "planner")
    return g.compile()


def drive_single(ctx: GraphContext, instruction: str,
                 callbacks: Sequence[BaseCallbackHandler] = ()) -> tuple[GraphOutcome, GraphState]:
    """Run the single-agent baseline to the end."""
    graph = build_single_agent_graph()
    state0 = initial_state(instruction)
    state0["subtask_index"] = -1
    t0 = time.perf_counter()
    limit = 4 + 2 * (ctx.budgets.max_subtasks + 2)
    state: GraphState = graph.invoke(state0, config={"recursion_limit": limit, "callbacks": list(callbacks)},
                                     context=ctx)
    outcome = summarise(state, time.perf_counter() - t0, uuid.uuid4().hex[:12], None)
    if state["status"] == "succeeded" and state["plan"] is None:
        outcome = outcome.model_copy(update={"graph_success": True})
    return outcome, state
