"""A single-agent bench run records its model calls like a graph run, and its report says which model, at which
endpoint, what it cost and why it failed — through the real ChatOpenAI client against the local test server."""

from __future__ import annotations

import json
from pathlib import Path

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.runner import run_bench
from tests.fixtures.graph_openai_server import FakeOpenAIServer

TASK = "grab_roller"  # Tier 3: an empty plan every turn ends the episode after a few turns


def test_single_agent_episodes_record_calls_tokens_and_latency(tmp_path: Path) -> None:
    empty = json.dumps({"visual_state_description": "a roller", "reasoning_and_reflection": "wait",
                        "language_plan": "nothing", "executable_plan": []})
    with FakeOpenAIServer() as srv:
        srv.script.defaults["unknown"] = empty  # the single agent's turns (no system prompt)
        cfg = BenchConfig(tier="fine", tasks=(TASK,), episodes=1, agent="single", save_images=False,
                          llm={"base_url": srv.base_url, "vlm_model": "vision-model"})
        results = run_bench(cfg, tmp_path, workers=1)
        asked = len(srv.script.requests)
        port = srv.httpd.server_address[1]
    rec = json.loads((tmp_path / "episodes.jsonl").read_text().splitlines()[0])
    calls = rec["llm_calls"]
    assert calls["calls"] == rec["turns"] == asked >= 2 and calls["failed"] == 0
    assert calls["tokens_in"] == 100 * asked and calls["tokens_out"] == 20 * asked  # the server's usage blocks
    assert calls["latency_s"] > 0 and calls["by_node"] == {"single": asked}

    task = results["tasks"][TASK]
    assert task["llm"]["per_episode"]["calls"] == asked and task["llm"]["per_success"] is None
    assert task["failure_categories"] == {"model failure": 1}
    assert task["leading_reasons"][0]["reason"] == "the model planned no action"
    assert results["models"]["by_agent"] == {"single": "vision-model"}
    assert results["models"]["vision_check"] == {"vision-model": "sees"}
    table = (tmp_path / "table.md").read_text()
    assert table.startswith(f"# ST-BiBench fine: single agent, models single: vision-model (endpoint 127.0.0.1:{port})")
    assert f"| {TASK} | 1 | {asked:.1f} | {100 * asked:.1f} | {20 * asked:.1f} |" in table
