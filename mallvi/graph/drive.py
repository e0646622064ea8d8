"""Run one instruction end to end: build the context, drive the graph (with approvals), judge the outcome."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any, cast

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command
from pydantic import BaseModel, Field

from mallvi.graph.builder import build_graph, shared_graph
from mallvi.graph.context import GraphContext
from mallvi.graph.schemas import FailureReport, LlmCallRecord
from mallvi.graph.state import GraphState, initial_state

log = logging.getLogger(__name__)

#: answers a human-approval interrupt: gets the payload, returns "approve", "abort" or {"action": "edit", ...};
#: returning None pauses the run (it can be resumed from the checkpoint with its thread id).
Decider = Callable[[dict[str, Any]], Any]


class LlmSummary(BaseModel):
    calls: int = 0
    failed: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    by_node: dict[str, int] = Field(default_factory=dict)

    @staticmethod
    def of(records: Sequence[LlmCallRecord]) -> LlmSummary:
        s = LlmSummary()
        for r in records:
            s.calls += 1
            s.failed += 0 if r.ok else 1
            s.tokens_in += r.tokens_in
            s.tokens_out += r.tokens_out
            s.latency_s += r.latency_s
            s.by_node[r.node] = s.by_node.get(r.node, 0) + 1
        return s


class GraphOutcome(BaseModel):
    """What the graph itself concluded, plus timing."""

    status: str
    graph_success: bool
    refusal: str | None = None
    refusal_cause: str | None = None
    subtasks: list[str] = Field(default_factory=list)
    goal: list[str] = Field(default_factory=list)
    attempts: dict[str, int] = Field(default_factory=dict)
    completed: list[int] = Field(default_factory=list)
    llm_calls: LlmSummary = Field(default_factory=LlmSummary)
    failure_report: FailureReport | None = None
    node_sequence: list[str] = Field(default_factory=list)
    node_time_s: float = 0.0
    transitions: int = 0
    wall_s: float = 0.0
    thread_id: str | None = None
    interrupt: dict[str, Any] | None = None


def drive(
    ctx: GraphContext,
    instruction: str,
    *,
    with_reflector: bool = True,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    thread_id: str | None = None,
    resume: bool = False,
    callbacks: Sequence[BaseCallbackHandler] = (),
    decide: Decider | None = None,
    interrupt_before_actor: bool = False,
) -> tuple[GraphOutcome, GraphState]:
    """Run the graph to the end (or to a pause) and summarise what it did.

    With ``ctx.approve`` a checkpointer is required; ``decide`` answers each approval. ``resume=True``
    continues the checkpointed thread ``thread_id`` instead of starting over.
    """
    if (ctx.approve or resume or interrupt_before_actor) and checkpointer is None:
        from mallvi.graph.checkpoint import memory_saver

        checkpointer = memory_saver()
    if checkpointer is None and not interrupt_before_actor:
        graph = shared_graph(with_reflector)
    else:
        graph = build_graph(with_reflector=with_reflector, checkpointer=checkpointer,
                            interrupt_before=["actor"] if interrupt_before_actor else None)
    thread_id = thread_id or uuid.uuid4().hex[:12]
    config: RunnableConfig = {"recursion_limit": ctx.budgets.recursion_limit(), "callbacks": list(callbacks),
                              "configurable": {"thread_id": thread_id}}
    t0 = time.perf_counter()
    payload: Any = None if resume else initial_state(instruction)
    pending: dict[str, Any] | None = None
    while True:
        result = graph.invoke(payload, config=config, context=ctx)
        interrupts = result.get("__interrupt__") if isinstance(result, dict) else None
        if not interrupts:
            pending = None
            break
        pending = dict(interrupts[0].value) if isinstance(interrupts[0].value, dict) else {"value": interrupts[0].value}
        answer = decide(pending) if decide is not None else None
        if answer is None:
            break
        payload = Command(resume=answer)
    wall = time.perf_counter() - t0
    final = graph.get_state(config).values if checkpointer is not None else result
    state = cast(GraphState, {**initial_state(instruction), **final})  # a thread with no checkpoint has no values
    if interrupt_before_actor and pending is None and state["status"] == "running":
        pending = {"dry_run": True}
    return summarise(state, wall, thread_id, pending), state


def summarise(state: GraphState, wall_s: float, thread_id: str | None, pending: dict[str, Any] | None) -> GraphOutcome:
    plan = state["plan"]
    status: str = state["status"]
    if state["refusal"]:
        status = "refused"
    elif pending is not None and status == "running":
        status = "paused"
    trail = state["trail"]
    n_sub = len(plan.subtasks) if plan else 0
    completed = sorted(set(state["completed"]))
    graph_success = status == "succeeded" and n_sub > 0 and len(completed) == n_sub
    return GraphOutcome(
        status=status, graph_success=graph_success, refusal=state["refusal"],
        refusal_cause=state.get("refusal_cause"),
        subtasks=[s.text for s in plan.subtasks] if plan else [], goal=[str(p) for p in plan.goal] if plan else [],
        attempts=dict(state["attempts"]), completed=completed,
        llm_calls=LlmSummary.of(state["llm_calls"]), failure_report=state["failure_report"],
        node_sequence=[r.node for r in trail], node_time_s=sum(r.duration_s for r in trail),
        transitions=len(trail), wall_s=wall_s, thread_id=thread_id, interrupt=pending,
    )
