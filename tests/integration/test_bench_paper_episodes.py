"""Whole single-agent episodes under the default (paper) protocol, through the real ChatOpenAI client against the
local OpenAI-compatible test server and the real simulator: what the model receives turn by turn, the original's
feedback lines and history, the freeze, and how results are marked beside the paper."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from mallvi.bench.agents.single_paper_prompt import packaged_example
from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.runner import run_bench
from mallvi.bench.tasks import get_task
from mallvi.sim_bridge.world import SimWorld
from mallvi.tracing.trace import read_events
from tests.fixtures.graph_openai_server import FakeOpenAIServer

SEED = 1230100  # seeds of this file: 1230100-1230199


def _reply(plan: Any) -> str:
    return json.dumps({"visual_state_description": "v", "reasoning_and_reflection": "r", "language_plan": "l",
                       "executable_plan": plan})  # fmt: skip


def _parts(request: dict[str, Any]) -> tuple[list[str], str, list[str]]:
    """The kinds of the one user message's parts, its text, and its image URLs."""
    (message,) = request["messages"]
    assert message["role"] == "user"
    kinds = [p["type"] for p in message["content"]]
    text = "".join(p.get("text", "") for p in message["content"] if p["type"] == "text")
    urls = [p["image_url"]["url"] for p in message["content"] if p["type"] == "image_url"]
    return kinds, text, urls


def _run(tmp_path: Path, tier: str, task: str, replies: list[str], **cfg: Any) -> tuple[dict[str, Any], list[Any]]:
    with FakeOpenAIServer() as srv:
        srv.script.add("unknown", *replies)
        srv.script.defaults["unknown"] = "I am not sure."  # not JSON: "Action is empty" from then on
        config = BenchConfig(tier=tier, tasks=(task,), episodes=1, agent="single", seed_start=SEED,  # type: ignore[arg-type]
                             llm={"base_url": srv.base_url, "model": "m"}, save_images=False, **cfg)  # fmt: skip
        results = run_bench(config, tmp_path, workers=1)
        requests = list(srv.script.requests)
    return results, requests


def _scene(task: str) -> tuple[float, dict[str, float]]:
    """The table top's height and each object's x at SEED."""
    w = SimWorld.create(get_task(task).scene_spec(), SEED, render=False)
    try:
        return w.table_top_z, {n: float(o.pose.p[0]) for n, o in w.objects.items()}
    finally:
        w.close()


@pytest.mark.slow
def test_tier2_default_is_the_originals_protocol_with_its_freeze(tmp_path: Path) -> None:
    task = "blocks_ranking_rgb"
    table_z, xs = _scene(task)
    no_ik = [-0.35, 0.3, table_z + 0.05, 0, 1, 0, 0]  # in the guard's box, but no joint solution reaches it
    arm = "left" if xs["red_block"] < 0 else "right"
    first = [
        {"action_id": "2.5", "action_name": "move_to_pose", "parameters": {"arm_tag": "left", "target_pose": no_ik}},
        {"action_id": "2.2", "action_name": "grasp_actor", "parameters": {"actor": "red block", "arm_tag": arm}},
        {"action_id": "2.8", "action_name": "back_to_origin", "parameters": {"arm_tag": "left", "speed": "fast"}},
        {"action_id": "2.9", "action_name": "get_arm_pose", "parameters": {"arm_tag": "right"}},
        {"action_id": "2.8", "action_name": "back_to_origin", "parameters": {"arm_tag": "right"}},
    ]
    second = [{"action_id": "2.2", "action_name": "grasp_actor", "parameters": {"actor": "pizza", "arm_tag": "left"}}]
    results, requests = _run(tmp_path, "planning", task, [_reply(first), _reply(second)])
    rec = json.loads((tmp_path / "episodes.jsonl").read_text().splitlines()[0])
    assert rec["status"] == "done" and len(requests) == rec["turns"] == get_task(task).max_turns
    kinds, text0, urls = _parts(requests[0])
    assert kinds == ["image_url", "image_url", "text", "image_url"]  # head, third view, text, example
    assert urls[0].startswith("data:image/jpeg;base64,") and urls[1].startswith("data:image/jpeg;base64,")
    assert base64.b64decode(urls[2].split(",", 1)[1]) == packaged_example(f"{task}.png")
    assert text0.startswith(f"\nThe task name is {task}, the description and the goal")
    assert "is the target_pose of red_block" in text0 and "executable_plan" in text0
    _, text1, _ = _parts(requests[1])
    assert text1.startswith("The 3-steps action history:\nStep 0, actionList [{'action_id': '2.5', 'action_name': "
                            "'move_to_pose'")  # the whole chunk as the model gave it, in Python's form
    # the failed plan froze the episode: reported as succeeded, and so is every later motion; the pose query is
    # reported as a failure that stops the chunk (the last back_to_origin never runs)
    assert "action_feedback:Action succeeded.\nAction succeeded.\nAction succeeded.\nAction failed: [0." in text1
    _, text2, _ = _parts(requests[2])
    assert "Step 1, actionList [{'action_id': '2.2', 'action_name': 'grasp_actor', 'parameters': {'actor': 'pizza'" \
        in text2 and "action_feedback:Action failed: Invalid actor: pizza." in text2  # fmt: skip
    _, text3, _ = _parts(requests[3])
    assert "Step 2, actionList {}, action_feedback:Action is empty, no action taken." in text3
    assert rec["frozen_at_action"] == 0 and rec["failed_actions"] == 1 and rec["parse_errors"] >= 1
    commands = [e for e in read_events(tmp_path / rec["trace"]) if e["kind"] == "actor_command"]
    assert [c["skill"] for c in commands] == ["move_to_pose", "grasp_actor", "back_to_origin", "get_arm_pose",
                                              "grasp_actor"]  # fmt: skip
    assert commands[0]["ok"] is False and commands[0]["reported"] == "Action succeeded."  # the trace tells the truth
    assert commands[1]["frozen"] is True and commands[2]["frozen"] is True
    table = (tmp_path / "table.md").read_text()
    assert "protocol paper" in table and f"Comparable with the paper: {task}" in table
    assert results["tasks"][task]["comparable"]["comparable"] is True
    assert results["config"]["single_protocol"] == "paper"


def test_tier3_sees_the_head_image_only_and_may_write_arithmetic(tmp_path: Path) -> None:
    task = "grab_roller"
    action = "[-0.2, -0.1, 0.95+0.05, 0.5, -0.5, 0.5, 0.5, 1, 0.2, -0.1, 1.0, 0.5, -0.5, 0.5, 0.5, 1]"
    _, requests = _run(tmp_path, "fine", task, [_reply([action, [1, 2, 3], action])])
    rec = json.loads((tmp_path / "episodes.jsonl").read_text().splitlines()[0])
    assert len(requests) == rec["turns"] == 5  # ⌈1.5 × 3⌉: too few actions succeeded to stop at the limit of 3
    kinds, text0, _ = _parts(requests[0])
    assert kinds == ["image_url", "text"]  # no third view and no example image in Tier 3 (but burger/fries)
    assert text0.startswith("\n!!!!! Assistant info (Very Important to provide some key info): This is a two arm")
    assert "grab the roller on the table" not in text0  # no task statement on the first turn
    assert "Now the left arm pose is [" in text0 and "The initial arm pose of left arm is [" in text0
    _, text1, _ = _parts(requests[1])
    assert "to achieve the human instruction: 'use both arms to grab the roller on the table and lift it to z>0.8(m)'" \
        in text1  # fmt: skip
    # the whole chunk as given (the third action never ran), then one line per action that ran
    assert f"Step 0, actionList ['{action}', [1, 2, 3], '{action}'], action_feedback:Action succeeded.\nAction " \
           "failed: Invalid action length: 3. Must be a list or tuple of 16 numbers.\n" in text1  # fmt: skip
    assert re.search(r"Now the left arm pose is \[-0\.(19|20)", text1)  # it went there (z computed: 1.0)
    commands = [e for e in read_events(tmp_path / rec["trace"]) if e["kind"] == "actor_command"]
    assert commands[0]["ok"] is True and commands[0]["args"][2] == pytest.approx(1.0)


def test_tier3_burger_and_fries_gets_its_example_image(tmp_path: Path) -> None:
    _, requests = _run(tmp_path, "fine", "place_burger_fries_ee", [])
    kinds, _, urls = _parts(requests[0])
    assert kinds == ["image_url", "text", "image_url"]
    assert base64.b64decode(urls[1].split(",", 1)[1]) == packaged_example("place_burger_fries.png")


def test_mallvi_protocol_rows_are_marked_not_comparable(tmp_path: Path) -> None:
    results, requests = _run(tmp_path, "fine", "stack_blocks_two", [], single_protocol="mallvi")
    kinds, text0, _ = _parts(requests[0])
    assert kinds == ["image_url", "image_url", "text"] and "The task is stack_blocks_two" in text0
    mark = results["tasks"]["stack_blocks_two"]["comparable"]
    assert mark["comparable"] is False and "mallvi protocol" in mark["why"]
    table = (tmp_path / "table.md").read_text()
    assert re.search(r"\| stack_blocks_two \| Stack3 \| [\d.]+\*? ✗ \|", table) and "protocol mallvi" in table
    assert "Not comparable (the single agent's mallvi protocol" in table
