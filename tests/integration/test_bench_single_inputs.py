"""What the single agent's model receives, turn by turn, and how leniently its actions are read — through the real
ChatOpenAI client against the local OpenAI-compatible test server, in the real simulator."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.episode import run_episode
from mallvi.bench.runner import run_bench
from mallvi.bench.tasks import get_task
from mallvi.sim_bridge.world import SimWorld
from mallvi.tracing.trace import read_events
from tests.fixtures.graph_openai_server import FakeOpenAIServer

TASK = "blocks_ranking_rgb"
SEED = 100000


def _reply(plan: list[dict[str, Any]]) -> str:
    return json.dumps({"visual_state_description": "three blocks", "reasoning_and_reflection": "start",
                       "language_plan": "move red", "executable_plan": plan})  # fmt: skip


def _parts(request: dict[str, Any]) -> tuple[list[str], str]:
    """The kinds of the user message's parts in order, and its text."""
    (message,) = request["messages"]
    assert message["role"] == "user"
    kinds = [p["type"] for p in message["content"]]
    text = "".join(p.get("text", "") for p in message["content"] if p["type"] == "text")
    return kinds, text


def _scene() -> dict[str, Any]:
    """The task's hints for SEED (object positions, targets), read from a world without cameras."""
    w = SimWorld.create(get_task(TASK).scene_spec(), SEED, render=False)
    try:
        return get_task(TASK).hints(w)
    finally:
        w.close()


def _image_bytes(request: dict[str, Any], index: int) -> bytes:
    images = [p for p in request["messages"][0]["content"] if p["type"] == "image_url"]
    return base64.b64decode(images[index]["image_url"]["url"].split(",", 1)[1])


@pytest.mark.slow
def test_mallvi_protocol_shows_both_views_the_example_and_the_task_statement_once(tmp_path: Path) -> None:
    examples = tmp_path / "examples"
    examples.mkdir()
    Image.new("RGB", (8, 6), (255, 0, 255)).save(examples / f"{TASK}.png")
    hints = _scene()
    arm = "LEFT" if hints["objects"]["red_block"][0] < 0 else "RIGHT"
    target = str(hints["targets"]["red_block"])
    sloppy = [  # how a model writes: spaces and capitals in names, kwargs, a pose as a string, both arms
        {"action_id": "2.2", "action_name": "Grasp_Actor", "parameters": {"actor": "Red Block", "arm_tag": arm}},
        {"action_id": "2.4", "action_name": "move_by_displacement",
         "parameters": {"arm_tag": arm.lower(), "z": "0.05"}},
        {"action_id": "2.3", "action_name": "place_actor",
         "parameters": {"actor": "the red one", "arm_tag": arm, "target_pose": target, "functional_point_id": 0,
                        "kwargs": {"constrain": "align", "pre_dis_axis": "fp"}}},
        {"action_id": "2.8", "action_name": "back_to_origin", "parameters": {"arm_tag": "both"}},
    ]  # fmt: skip
    with FakeOpenAIServer() as srv:
        srv.script.add("unknown", _reply(sloppy))
        srv.script.defaults["unknown"] = _reply([])  # later turns: an empty plan
        cfg = BenchConfig(tier="planning", tasks=(TASK,), episodes=1, agent="single", single_protocol="mallvi",
                          llm={"base_url": srv.base_url, "model": "m", "example_images": str(examples)})  # fmt: skip
        rec = run_episode(cfg, TASK, SEED, tmp_path / "run")
        requests = list(srv.script.requests)
    assert rec["status"] == "done" and len(requests) == rec["turns"] >= 2
    kinds, first = _parts(requests[0])
    assert kinds == ["image_url", "image_url", "text", "image_url"]  # head, third view, text, example
    head, third, example = (_image_bytes(requests[0], i) for i in range(3))
    assert head != third and example == (examples / f"{TASK}.png").read_bytes()
    assert f"The task is {TASK}" in first and "You control a robot with two arms" in first
    assert "The last steps" not in first
    for text in (first, _parts(requests[1])[1]):
        assert "Assistant info" in text and "functional_point_id=0" in text and '"targets"' in text
        assert '"executable_plan"' in text and "An example reply" in text
    kinds2, second = _parts(requests[1])
    assert kinds2 == kinds
    assert f"The task is {TASK}" not in second and "You control a robot with two arms" not in second
    assert "Step 1" in second and "Action succeeded." in second
    commands = [e for e in read_events(tmp_path / "run" / rec["trace"]) if e["kind"] == "actor_command"]
    assert [(c["skill"], c["ok"]) for c in commands] == [
        ("grasp_actor", True), ("move_by_displacement", True), ("place_actor", True), ("back_to_origin", True)]
    assert commands[0]["args"]["actor"] == "red_block" and commands[2]["args"]["actor"] == "red_block"
    assert commands[2]["args"]["constrain"] == "align" and commands[3]["args"]["arm_tag"] == "both"


@pytest.mark.slow
def test_mallvi_protocol_reports_a_failed_motion_plan(tmp_path: Path) -> None:
    table_z = _scene()["targets"]["red_block"][2]
    no_ik = [-0.35, 0.25, table_z + 0.05, 0, 1, 0, 0]  # inside the guard's box, but no joint solution reaches it
    out_of_reach = {"action_id": "2.5", "action_name": "move_to_pose",
                    "parameters": {"arm_tag": "left", "target_pose": no_ik}}  # fmt: skip
    grasp = {"action_id": "2.2", "action_name": "grasp_actor", "parameters": {"actor": "red_block", "arm_tag": "left"}}
    with FakeOpenAIServer() as srv:
        srv.script.add("unknown", _reply([out_of_reach, grasp]))
        srv.script.defaults["unknown"] = _reply([])
        cfg = BenchConfig(tier="planning", tasks=(TASK,), episodes=1, agent="single", single_protocol="mallvi",
                          llm={"base_url": srv.base_url}, save_images=False)  # fmt: skip
        results = run_bench(cfg, tmp_path)
        second = _parts(srv.script.requests[1])[1]
    rec = json.loads((tmp_path / "episodes.jsonl").read_text().splitlines()[0])
    commands = [e for e in read_events(tmp_path / rec["trace"]) if e["kind"] == "actor_command"]
    assert commands[0]["skill"] == "move_to_pose" and commands[0]["ok"] is False
    table = (tmp_path / "table.md").read_text()
    assert "Action failed" in second and len(commands) == 1  # the chunk stops at the failure; no freeze
    assert "protocol mallvi" in table and rec["failed_actions"] == 1 and "frozen_at_action" not in rec
    assert results["config"]["single_protocol"] == "mallvi"
    cost = results["cost"]  # the episode's cost profile reaches results.json
    assert cost["episodes"] == 1 and cost["render_s"] > 0 and cost["planning_s"] > 0
    assert cost["sim_s"] == 0.0  # the only motion found no plan
    parts = sum(cost[f"{p}_s"] for p in ("setup", "render", "physics", "planning", "perception", "graph", "other"))
    assert parts == pytest.approx(cost["wall_s"], rel=0.01)
