"""Assembles the MALLVi graph (DESIGN.md "The graph")::

    START -+- decomposer -+
           +- descriptor -+- dispatch - perceptor - grounder - projector - thinker - approve - actor - reflector
                             ^                                                                        |
                             +-- next subtask / blamed agent / descriptor re-scan / END  <------------+

An agent that reports a problem (no detection, no depth, invalid plan) goes straight to the Reflector.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from mallvi.graph import routing
from mallvi.graph.context import GraphContext
from mallvi.graph.nodes.actor import actor
from mallvi.graph.nodes.approve import approve
from mallvi.graph.nodes.common import timed
from mallvi.graph.nodes.decomposer import decomposer
from mallvi.graph.nodes.descriptor import descriptor
from mallvi.graph.nodes.dispatch import dispatch
from mallvi.graph.nodes.grounder import grounder
from mallvi.graph.nodes.perceptor import perceptor
from mallvi.graph.nodes.projector import projector
from mallvi.graph.nodes.reflector import advance, reflector
from mallvi.graph.nodes.thinker import thinker
from mallvi.graph.state import GraphState

CompiledGraph = CompiledStateGraph[Any, Any, Any, Any]


def build_graph(*, with_reflector: bool = True, checkpointer: BaseCheckpointSaver[Any] | None = None,
                interrupt_before: list[str] | None = None) -> CompiledGraph:
    """The compiled multi-agent graph; ``with_reflector=False`` is the no-reflector ablation."""
    g: StateGraph[Any, Any, Any, Any] = StateGraph(GraphState, context_schema=GraphContext)
    check = "reflector" if with_reflector else "advance"
    for name, fn in (("decomposer", decomposer), ("descriptor", descriptor), ("dispatch", dispatch),
                     ("perceptor", perceptor), ("grounder", grounder), ("projector", projector),
                     ("thinker", thinker), ("approve", approve), ("actor", actor)):
        g.add_node(name, timed(name, fn))  # type: ignore[call-overload]
    g.add_node(check, timed(check, reflector if with_reflector else advance))  # type: ignore[call-overload]
    g.add_edge(START, "decomposer")
    g.add_edge(START, "descriptor")
    g.add_edge("decomposer", "dispatch")
    g.add_edge("descriptor", "dispatch")
    g.add_conditional_edges("dispatch", routing.after_dispatch, {"perceptor": "perceptor", END: END})
    for node, nxt in (("perceptor", "grounder"), ("grounder", "projector"), ("projector", "thinker"),
                      ("thinker", "approve")):
        g.add_conditional_edges(node, routing.after_stage, {"next": nxt, "reflector": check})
    g.add_conditional_edges("approve", routing.after_approve, {"actor": "actor", END: END})
    g.add_edge("actor", check)
    if with_reflector:
        targets = ["dispatch", "descriptor", "perceptor", "grounder", "projector", "thinker", "actor"]
        g.add_conditional_edges("reflector", routing.after_reflector, {**{t: t for t in targets}, END: END})
    else:
        g.add_edge("advance", "dispatch")
    return g.compile(checkpointer=checkpointer, interrupt_before=interrupt_before)


@cache
def shared_graph(with_reflector: bool = True) -> CompiledGraph:
    """``build_graph`` without checkpointer or pauses, compiled once per process and reused by every run (the
    compiled graph keeps no run's state: that lives in the invocation and its context)."""
    return build_graph(with_reflector=with_reflector)


def recursion_limit(ctx: GraphContext, n_subtasks: int | None = None) -> int:
    """LangGraph's recursion limit for a run, derived from the budgets (never hit by a run within budget)."""
    return ctx.budgets.recursion_limit(n_subtasks)
