"""The single-planner baseline through the real ChatOpenAI client against a local OpenAI-compatible server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.episode import run_episode
from mallvi.bench.tasks import get_task
from mallvi.sim_bridge.world import SimWorld
from mallvi.tracing.trace import read_events


class _Server:
    def __init__(self) -> None:
        self.replies: list[str] = []
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                text = server.replies.pop(0) if server.replies else "{}"
                payload = {
                    "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
                }  # fmt: skip
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture()
def server() -> Iterator[_Server]:
    s = _Server()
    t = threading.Thread(target=s.httpd.serve_forever, daemon=True)
    t.start()
    yield s
    s.httpd.shutdown()


def _prompt_text(request: dict[str, Any]) -> str:
    content = request["messages"][0]["content"]
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def test_mallvi_protocol_turns_feedback_history_and_success(tmp_path: Path, server: _Server,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000000000")
    task = get_task("place_burger_fries")
    w = SimWorld.create(task.scene_spec(), 100000, render=False)
    targets = task.hints(w)["targets"]
    w.close()
    plan = [
        {"action_id": "2.2", "action_name": "grasp_actor", "parameters": {"actor": "burger", "arm_tag": "left"}},
        {"action_id": "2.3", "action_name": "place_actor",
         "parameters": {"actor": "burger", "arm_tag": "left", "target_pose": targets["burger"]}},
        {"action_id": "2.8", "action_name": "back_to_origin", "parameters": {"arm_tag": "left"}},
        {"action_id": "2.2", "action_name": "grasp_actor", "parameters": {"actor": "fries", "arm_tag": "right"}},
        {"action_id": "2.3", "action_name": "place_actor",
         "parameters": {"actor": "fries", "arm_tag": "right", "target_pose": targets["fries"]}},
    ]  # fmt: skip
    server.replies = [
        "I think I should grasp the burger first.",  # no JSON: a failed turn, reported back
        json.dumps(
            {
                "visual_state_description": "x",
                "reasoning_and_reflection": "y",
                "language_plan": "z",
                "executable_plan": [
                    {
                        "action_id": "2.2",
                        "action_name": "grasp_actor",
                        "parameters": {"actor": "pizza", "arm_tag": "left"},
                    }
                ],
            }
        ),
        "```json\n" + json.dumps({"visual_state_description": "a", "executable_plan": json.dumps(plan)}) + "\n```",
    ]
    cfg = BenchConfig(tier="planning", tasks=("place_burger_fries",), episodes=1, agent="single",
                      llm={"base_url": server.base_url, "model": "planner-x"}, save_images=False,
                      single_protocol="mallvi")  # fmt: skip
    rec = run_episode(cfg, "place_burger_fries", 100000, tmp_path)
    assert rec["status"] == "done" and rec["success"] is True
    assert rec["turns"] == 3 and rec["parse_errors"] == 1 and rec["failed_actions"] == 1
    assert len(server.requests) == 3
    first, third = _prompt_text(server.requests[0]), _prompt_text(server.requests[2])
    for piece in ("place_burger_fries", "Assistant info", '"2.3"', "executable_plan", "[w, x, y, z]"):
        assert piece in first
    assert "Step" not in first  # no history on the first turn
    assert "Step 1" in third and "Step 2" in third and "unknown object 'pizza'" in third
    body = server.requests[0]
    assert body["model"] == "planner-x" and body["temperature"] == 0
    image = [p for p in body["messages"][0]["content"] if p.get("type") == "image_url"]
    assert image and image[0]["image_url"]["url"].startswith("data:image/png;base64,")
    events = read_events(tmp_path / rec["trace"])
    assert "sk-test" not in json.dumps(events)
    assert [e["skill"] for e in events if e["kind"] == "actor_command"][-1] == "place_actor"
    calls = [e for e in events if e["kind"] == "llm_call"]
    assert len(calls) == 3 and calls[0]["model"] == "planner-x" and calls[0]["tokens_in"] == 10


def test_grounding_answers_are_parsed_and_scored(tmp_path: Path, server: _Server) -> None:
    task = get_task("grounding_sparse")
    w = SimWorld.create(task.scene_spec(), 100000, render=False)
    truth = task.truth(w)
    w.close()
    name, arm = next(iter(truth.items()))
    wrong = "right" if arm == "left" else "left"
    results = [{"object": n, "use_arm": (wrong if n == name else a).upper()} for n, a in truth.items()]
    server.replies = ["not json at all", json.dumps({"visual_state_description": "blocks", "results": results})]
    cfg = BenchConfig(tier="grounding", tasks=("grounding_sparse",), episodes=1, agent="single",
                      llm={"base_url": server.base_url}, save_images=False)  # fmt: skip
    rec = run_episode(cfg, "grounding_sparse", 100000, tmp_path)
    assert rec["parse_errors"] == 1 and rec["turns"] == 2
    assert rec["success"] is False and 0.0 <= rec["score"] < 100.0
    assert rec["answers"][name] == wrong
    assert "LEFT or RIGHT" in _prompt_text(server.requests[0])
