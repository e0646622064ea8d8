"""The llm backend through the real ChatOpenAI client against a local OpenAI-compatible HTTP server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mallvi.config import Budgets, LlmConfig, RunConfig
from mallvi.graph.backends.factory import make_backends
from mallvi.graph.drive import drive

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.fixtures
from tests.fixtures.graph_fakes import FakeWorld, fake_context
from tests.fixtures.graph_openai_server import FakeOpenAIServer

PLAN = json.dumps({
    "subtasks": [{"text": "stack the green block on the red block", "action": "stack",
                  "obj": {"phrase": "the green block", "color": "green", "label": "block"},
                  "target": {"phrase": "the red block", "color": "red", "label": "block"}, "relation": "on",
                  "post": [{"relation": "on", "args": ["green_block", "red_block"]}]}],
    "goal": [{"relation": "on", "args": ["green_block", "red_block"]}],
})
DESCRIBE = json.dumps({"objects": [{"id": "red_block", "label": "block", "color": "red"},
                                   {"id": "green_block", "label": "block", "color": "green"}], "relations": []})
FOCUS = json.dumps({"focus": ["green_block", "red_block"]})
GROUND = json.dumps({"choices": {"green_block": 0, "red_block": 0}})


def think(obj: str = "green_block") -> str:
    return json.dumps({"calls": [
        {"skill": "grasp_actor", "arm": "right", "object": obj},
        {"skill": "place_actor", "arm": "right", "object": obj, "target_pose": [-0.2, 0.0, 0.78, 1, 0, 0, 0],
         "args": {"functional_point_id": 0}},
        {"skill": "back_to_origin", "arm": "right"},
    ]})


SUCCESS = json.dumps({"verdict": "success", "explanation": "the green block is on the red block"})


def _defaults(srv: FakeOpenAIServer) -> None:
    srv.script.defaults.update(decomposer=PLAN, descriptor=DESCRIBE, perceptor=FOCUS, grounder=GROUND,
                               thinker=think(), reflector=SUCCESS)


def _run(srv: FakeOpenAIServer, world: FakeWorld, timeout_s: float = 5.0, budgets: Budgets | None = None):  # type: ignore[no-untyped-def]
    cfg = RunConfig(backend="llm", llm=LlmConfig(base_url=srv.base_url, llm_model="text-model",
                                                 vlm_model="vision-model", api_key="sk-test-key-123456",
                                                 timeout_s=timeout_s, backoff_s=0.01))
    ctx = fake_context(world, backends=make_backends(cfg), budgets=budgets)
    return drive(ctx, "stack the green block on the red block")


def _world() -> FakeWorld:
    return FakeWorld.blocks(("red", -0.2, 0.0), ("green", 0.2, 0.0))


def test_full_llm_run_succeeds_and_records_every_call() -> None:
    world = _world()
    with FakeOpenAIServer() as srv:
        _defaults(srv)
        out, _ = _run(srv, world)
        reqs = srv.script.requests
    assert out.status == "succeeded" and out.graph_success
    red, green = world.objects["red_block"].pos, world.objects["green_block"].pos
    assert abs(green[0] - red[0]) < 1e-6 and green[2] > red[2] + 0.03  # really stacked in the fake world
    agents = [r["agent"] for r in reqs]
    assert sorted(set(agents)) == ["decomposer", "descriptor", "grounder", "perceptor", "reflector", "thinker"]
    by_agent = {r["agent"]: r for r in reqs}
    assert by_agent["descriptor"]["has_image"] and by_agent["reflector"]["has_image"]
    assert not by_agent["thinker"]["has_image"]
    assert by_agent["reflector"]["model"] == "vision-model" and by_agent["thinker"]["model"] == "text-model"
    assert by_agent["thinker"]["auth"] == "Bearer sk-test-key-123456"
    probes = [p for p in srv.script.probes if p["decoding"] != "vision"]
    # one probe per endpoint and model found OpenAI-style json_schema decoding, used by every later request
    assert sorted(p["model"] for p in probes) == ["text-model", "vision-model"]
    # the model given images was checked once to see them (a red and a blue image)
    assert [p["model"] for p in srv.script.probes if p["decoding"] == "vision"] == ["vision-model"] * 2
    assert {r["decoding"] for r in reqs} == {"json_schema"}
    assert out.llm_calls.calls == len(reqs) + len(probes) == 8
    # a text-only message is a plain string (text-only chat templates need it); parts only with an image
    assert by_agent["thinker"]["content_types"] == ["str", "str"]
    assert by_agent["reflector"]["content_types"] == ["str", "list"]
    assert all(r["max_tokens"] and r["max_tokens"] == r["max_completion_tokens"] <= 1024 for r in reqs)
    assert out.llm_calls.tokens_in == 600 and out.llm_calls.tokens_out == 120


def test_malformed_json_a_429_and_a_timeout_are_survived() -> None:
    world = _world()
    with FakeOpenAIServer() as srv:
        _defaults(srv)
        srv.script.add("decomposer", "Sure! Here is the plan: {subtasks: [oops", PLAN)
        srv.script.add("perceptor", {"status": 429}, FOCUS)
        srv.script.add("grounder", {"status": 503}, GROUND)
        srv.script.add("thinker", {"delay_s": 1.5, "content": think()}, think())
        out, _ = _run(srv, world, timeout_s=0.5)
        agents = srv.script.agents_called()
    assert out.status == "succeeded" and out.graph_success
    assert agents.count("decomposer") == 2  # re-asked after the invalid JSON
    assert agents.count("perceptor") == 2 and agents.count("grounder") == 2 and agents.count("thinker") == 2
    assert out.llm_calls.failed == 3  # the 429, the 503 and the timeout were recorded as failed calls


def test_an_answer_naming_a_missing_object_is_rejected_not_executed() -> None:
    world = _world()
    with FakeOpenAIServer() as srv:
        _defaults(srv)
        srv.script.add("thinker", think("purple_block"), think())
        out, _ = _run(srv, world)
        agents = srv.script.agents_called()
    assert out.status == "succeeded"
    assert agents.count("thinker") == 2
    assert all(c[2] != "purple_block" and "purple_block" not in str(c[2]) for c in world.calls)


def test_a_model_that_insists_on_a_missing_object_moves_nothing_and_fails_the_run() -> None:
    world = _world()
    before = {k: list(o.pos) for k, o in world.objects.items()}
    with FakeOpenAIServer() as srv:
        _defaults(srv)
        srv.script.defaults["thinker"] = think("purple_block")
        out, _ = _run(srv, world, budgets=Budgets(max_attempts_per_subtask=2, rescan_after_failures=5))
    assert out.status == "failed" and out.failure_report is not None
    assert "purple_block" in out.failure_report.reason
    assert world.calls == [] and {k: o.pos for k, o in world.objects.items()} == before


def test_llm_backend_without_a_base_url_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from mallvi.config import ConfigError

    monkeypatch.delenv("MALLVI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="base URL"):
        RunConfig(backend="llm", llm=LlmConfig.from_env())


def test_single_agent_llm_baseline_plans_each_step_in_one_call() -> None:
    from mallvi.graph.single_planner import drive_single

    world = _world()
    with FakeOpenAIServer() as srv:
        srv.script.add("single_agent", json.dumps({"calls": json.loads(think("purple_block"))["calls"]}),
                       json.dumps({"calls": json.loads(think())["calls"]}), json.dumps({"done": True}))
        cfg = RunConfig(backend="llm", single_agent=True,
                        llm=LlmConfig(base_url=srv.base_url, timeout_s=5.0, backoff_s=0.01))
        ctx = fake_context(world, backends=make_backends(cfg))
        out, _ = drive_single(ctx, "stack the green block on the red block")
        agents = srv.script.agents_called()
    assert out.status == "succeeded" and out.graph_success
    assert set(agents) == {"single_agent"} and len(agents) == 3  # one re-ask for the unknown object, then done
    assert all(r["has_image"] for r in srv.script.requests)
    assert world.objects["green_block"].pos[2] > world.objects["red_block"].pos[2] + 0.03
