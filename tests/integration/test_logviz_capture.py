"""The callback handler traces a real LangGraph run: nodes, retries with attempt numbers, LLM calls, verdicts."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph

from mallvi.logviz.reader import load_run
from mallvi.tracing.capture import TraceCallbackHandler
from mallvi.tracing.trace import TraceWriter, read_events


class _State(TypedDict):
    subtask_index: int
    attempts: dict[str, int]
    answers: Annotated[list[str], operator.add]
    verdicts: Annotated[list[dict[str, Any]], operator.add]


def _build(llm: GenericFakeChatModel, fail_times: int, explode: bool = False) -> Any:
    def thinker(state: _State) -> dict[str, Any]:
        if explode:
            raise RuntimeError("gripper on fire")
        reply = llm.invoke([SystemMessage(content="You place blocks."), HumanMessage(content="Where does red go?")])
        return {"answers": [str(reply.content)]}

    def reflector(state: _State) -> dict[str, Any]:
        failures = state["attempts"].get("0", 0)
        if failures < fail_times:
            verdict = {
                "verdict": "failure",
                "blamed_agent": "thinker",
                "failure_category": "wrong_target",
                "explanation": "red block is not on the pad",
            }
            return {"attempts": {"0": failures + 1}, "verdicts": [verdict]}
        return {"verdicts": [{"verdict": "success", "blamed_agent": None, "explanation": "done"}]}

    def route(state: _State) -> str:
        return "thinker" if state["verdicts"][-1]["verdict"] == "failure" else END

    g = StateGraph(_State)
    g.add_node("thinker", thinker)
    g.add_node("reflector", reflector)
    g.add_edge(START, "thinker")
    g.add_edge("thinker", "reflector")
    g.add_conditional_edges("reflector", route)
    return g.compile()


def _fake_llm(n: int) -> GenericFakeChatModel:
    replies = [
        AIMessage(
            content=f"put it at (0.1, {i}.0)",
            usage_metadata={"input_tokens": 11, "output_tokens": 7, "total_tokens": 18},
            response_metadata={"model_name": "fake-planner-1"},
        )
        for i in range(n)
    ]
    return GenericFakeChatModel(messages=iter(replies))


def test_retry_loop_is_traced_with_attempts_llm_calls_and_verdicts(tmp_path: Path) -> None:
    graph = _build(_fake_llm(5), fail_times=2)
    with TraceWriter(tmp_path) as writer:
        writer.emit("run_start", instruction="put red on the pad", task="demo", seed=1, config={})
        graph.invoke(
            {"subtask_index": 0, "attempts": {}, "answers": [], "verdicts": []},
            config={"callbacks": [TraceCallbackHandler(writer)]},
        )
        writer.emit("run_end", status="done", success=True, graph_success=True, wall_s=0.5, failure_report=None)

    run = load_run(tmp_path)
    labels = [ex.label for ex in run.node_execs]
    assert labels == ["thinker #1", "reflector #1", "thinker #2", "reflector #2", "thinker #3", "reflector #3"]
    assert all(ex.outcome != "running" and ex.duration_s is not None and ex.duration_s >= 0 for ex in run.node_execs)
    # the reflector's failing verdicts colour it and blame the preceding thinker execution
    assert [ex.outcome for ex in run.node_execs if ex.node == "reflector"] == ["failed", "failed", "ok"]
    assert run.node_execs[0].blamed_by == 1 and run.node_execs[2].blamed_by == 3
    assert [ex.route for ex in run.node_execs if ex.node == "reflector"] == ["thinker", "thinker", END]
    assert [v["blamed_agent"] for v in run.verdicts] == ["thinker", "thinker", None]

    assert run.llm_calls == 3 and run.tokens_in == 33 and run.tokens_out == 21
    call = run.node_execs[2].llm_calls[0]
    assert call["model"] == "fake-planner-1"
    # the index leaves prompts and responses in the file; the run reads them back when a page asks
    assert run.event_value(call, "prompt")[1] == {"role": "human", "content": "Where does red go?"}
    assert run.event_value(call, "response") == "put it at (0.1, 1.0)"
    assert call["latency_s"] >= 0
    assert run.node_execs[2].outputs == {"answers": ["put it at (0.1, 1.0)"]}
    assert run.outcome == "success" and run.task == "demo"


def test_a_failing_node_is_traced_as_an_error(tmp_path: Path) -> None:
    graph = _build(_fake_llm(1), fail_times=0, explode=True)
    with TraceWriter(tmp_path) as writer, pytest.raises(RuntimeError, match="gripper on fire"):
        graph.invoke(
            {"subtask_index": 0, "attempts": {}, "answers": [], "verdicts": []},
            config={"callbacks": [TraceCallbackHandler(writer)]},
        )
    events = read_events(tmp_path)
    end = next(e for e in events if e["kind"] == "node_end")
    assert end["outcome"] == "error" and "gripper on fire" in end["error"]
    assert any(e["kind"] == "error" and e["where"] == "thinker" for e in events)
    run = load_run(tmp_path)
    assert run.outcome == "running"  # no run_end: the run never finished
    assert run.node_execs[0].outcome == "error"


def test_a_human_approval_interrupt_is_traced_as_interrupted(tmp_path: Path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import interrupt

    class _S(TypedDict):
        approved: bool

    def approve(state: _S) -> dict[str, Any]:
        return {"approved": bool(interrupt("move the left arm 20 cm down?"))}

    g = StateGraph(_S)
    g.add_node("approve", approve)
    g.add_edge(START, "approve")
    g.add_edge("approve", END)
    graph = g.compile(checkpointer=InMemorySaver())
    with TraceWriter(tmp_path) as writer:
        graph.invoke(
            {"approved": False},
            config={"callbacks": [TraceCallbackHandler(writer)], "configurable": {"thread_id": "t1"}},
        )
    ends = [e for e in read_events(tmp_path) if e["kind"] == "node_end"]
    assert [e["outcome"] for e in ends] == ["interrupted"]
    assert not any(e["kind"] == "error" for e in read_events(tmp_path))


def test_an_async_run_is_traced_the_same_way(tmp_path: Path) -> None:
    import asyncio

    graph = _build(_fake_llm(5), fail_times=1)
    with TraceWriter(tmp_path) as writer:
        asyncio.run(
            graph.ainvoke(
                {"subtask_index": 0, "attempts": {}, "answers": [], "verdicts": []},
                config={"callbacks": [TraceCallbackHandler(writer)]},
            )
        )
    run = load_run(tmp_path)
    assert [ex.label for ex in run.node_execs] == ["thinker #1", "reflector #1", "thinker #2", "reflector #2"]
    assert run.llm_calls == 2 and all(len(ex.llm_calls) == 1 for ex in run.node_execs if ex.node == "thinker")
