"""Routers of the graph: each returns one of a fixed set of node names (typed with Literal)."""

from __future__ import annotations

from typing import Literal

from mallvi.graph.state import GraphState

AfterDispatch = Literal["perceptor", "__end__"]
AfterStage = Literal["next", "reflector"]
AfterApprove = Literal["actor", "__end__"]
AfterReflector = Literal["dispatch", "descriptor", "perceptor", "grounder", "projector", "thinker", "actor", "__end__"]


def after_dispatch(state: GraphState) -> AfterDispatch:
    """Work on the current subtask, or stop (refused, all done, aborted)."""
    if state["status"] != "running":
        return "__end__"
    return "perceptor"


def after_stage(state: GraphState) -> AfterStage:
    """An agent that reported a problem goes straight to the Reflector (which blames it); else onward."""
    return "reflector" if state["stage_error"] is not None else "next"


def after_approve(state: GraphState) -> AfterApprove:
    return "__end__" if state["status"] == "aborted" else "actor"


def after_reflector(state: GraphState) -> AfterReflector:
    """Where the Reflector's decision sends the run: the next subtask, the blamed agent, a re-scan or the end."""
    if state["status"] != "running":
        return "__end__"
    target = state["retry_from"] or "dispatch"
    for node in _RETRY_TARGETS:
        if target == node:
            return node
    return "__end__"


_RETRY_TARGETS: tuple[AfterReflector, ...] = (
    "dispatch", "descriptor", "perceptor", "grounder", "projector", "thinker", "actor")

