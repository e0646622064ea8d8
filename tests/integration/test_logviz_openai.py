"""A real langchain-openai client over HTTP to a local server, inside a LangGraph node: the trace records the
call's model, tokens and latency from the OpenAI response, and never the API key that was sent."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar, TypedDict

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, StateGraph

from mallvi.logviz.reader import load_run
from mallvi.tracing.capture import TraceCallbackHandler
from mallvi.tracing.trace import TraceWriter

KEY = "sk-test-9f8e7d6c5b4a3f2e1d0c"


class _Handler(BaseHTTPRequestHandler):
    seen_auth: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.seen_auth.append(self.headers.get("Authorization", ""))
        reply = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"] + "-2025",
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": '{"arm": "left"}'}}
            ],
            "usage": {"prompt_tokens": 42, "completion_tokens": 5, "total_tokens": 47},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def server() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()
    thread.join(timeout=5)


class _S(TypedDict):
    answer: str


def test_openai_call_in_a_node_is_traced_without_the_key(tmp_path: Path, server: str) -> None:
    llm = ChatOpenAI(model="planner", base_url=server, api_key=KEY, temperature=0, max_retries=0, timeout=10)

    def thinker(state: _S) -> dict[str, Any]:
        return {"answer": str(llm.invoke([HumanMessage(content="Which arm grasps the red block at x=-0.1?")]).content)}

    g = StateGraph(_S)
    g.add_node("thinker", thinker)
    g.add_edge(START, "thinker")
    g.add_edge("thinker", END)
    with TraceWriter(tmp_path) as writer:
        writer.emit("run_start", instruction="x", task="t", seed=0, config={"base_url": server, "api_key": KEY})
        g.compile().invoke({"answer": ""}, config={"callbacks": [TraceCallbackHandler(writer)]})

    assert _Handler.seen_auth[-1] == f"Bearer {KEY}"  # the key really went over the wire
    assert KEY not in (tmp_path / "events.jsonl").read_text()
    run = load_run(tmp_path)
    (call,) = run.node_execs[0].llm_calls
    assert call["node"] == "thinker" and call["model"] == "planner-2025"
    assert (call["tokens_in"], call["tokens_out"]) == (42, 5)
    # the index leaves a call's prompt and response in the file; they are read back when a page opens the call
    assert run.event_value(call, "response") == '{"arm": "left"}' and call["latency_s"] > 0
    prompt = [{"role": "human", "content": "Which arm grasps the red block at x=-0.1?"}]
    assert run.event_value(call, "prompt") == prompt
    assert run.tokens == 47
