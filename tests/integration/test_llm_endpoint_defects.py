"""The llm backend against endpoints that misbehave, through the real ChatOpenAI client and the local test server.

Covers: decoding found by probing (and the fall-back to prompt-only JSON), a NaN/inf token count, an API key that
a server echoes back, a 500 caused by the request's content (not retried), an image sent to a text-only model,
the time bound per question with no wait after the last try, bad ``--llm-timeout``/``--base-url`` values refused
before anything is built, and ``mallvi doctor --base-url``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mallvi.cli import main
from mallvi.config import LlmConfig, RunConfig
from mallvi.graph.agent_errors import AgentError
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.factory import make_backends
from mallvi.graph.backends.llm.agents import FocusAnswer
from mallvi.graph.backends.llm.client import LlmClient, make_chat_model
from mallvi.graph.drive import drive
from mallvi.tracing.trace import TraceWriter

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.fixtures
from tests.fixtures.graph_fakes import FakeWorld, fake_context
from tests.fixtures.graph_openai_server import FakeOpenAIServer
from tests.integration.test_graph_llm_server import FOCUS, _defaults

KEY = "sk-live-0123456789abcdefSECRET"
INSTRUCTION = "stack the green block on the red block"


def _cfg(srv: FakeOpenAIServer, **kw: object) -> LlmConfig:
    base = {"base_url": srv.base_url, "llm_model": "text-model", "vlm_model": "vision-model", "api_key": KEY,
            "timeout_s": 5.0, "backoff_s": 0.01}
    return LlmConfig(**{**base, **kw})  # type: ignore[arg-type]


def _client(srv: FakeOpenAIServer, sleeps: list[float] | None = None, **kw: object) -> LlmClient:
    cfg = _cfg(srv, **kw)
    return LlmClient(make_chat_model(cfg, cfg.llm_model), cfg.llm_model, cfg,
                     sleep=(sleeps.append if sleeps is not None else time.sleep))


def _ask_focus(client: LlmClient, log: CallLog, images: list[np.ndarray] | None = None) -> FocusAnswer:
    return client.ask("perceptor", "You are the Perceptor.", "Which objects?", FocusAnswer, log, images=images)


def _world() -> FakeWorld:
    return FakeWorld.blocks(("red", -0.2, 0.0), ("green", 0.2, 0.0))


@pytest.mark.parametrize(("honours", "expected"), [
    (set(), "prompt"), ({"json_object_schema"}, "json_object_schema"), ({"guided_json"}, "guided_json")])
def test_the_probe_finds_what_the_endpoint_enforces_once_and_answers_use_it(honours: set[str], expected: str) -> None:
    with FakeOpenAIServer() as srv:
        srv.script.structured = honours
        srv.script.defaults["perceptor"] = FOCUS
        log = CallLog()
        client = _client(srv)
        assert _ask_focus(client, log).focus == ["green_block", "red_block"]
        assert _ask_focus(_client(srv), log).focus == ["green_block", "red_block"]  # a second client: cached
        probes, reqs = list(srv.script.probes), list(srv.script.requests)
    tried = [p["decoding"] for p in probes]
    order = ["json_schema", "json_object_schema", "structured_outputs", "guided_json"]
    assert tried == order[: order.index(expected) + 1] if expected != "prompt" else tried == order
    assert [r["decoding"] for r in reqs] == [expected, expected]
    answers = [r for r in log.records if r.purpose == "answer"]
    assert [r.decoding for r in answers] == [expected, expected]
    assert len([r for r in log.records if r.purpose == "probe"]) == len(tried)  # recorded once, with the result
    assert [r.ok for r in log.records if r.purpose == "probe"][-1] == (expected != "prompt")


def test_nan_and_infinite_token_counts_do_not_crash_the_run() -> None:
    world = _world()
    with FakeOpenAIServer() as srv:
        _defaults(srv)
        thinker = srv.script.defaults["thinker"]
        srv.script.add("thinker", {"content": thinker, "usage": {"prompt_tokens": float("nan"),
                                                                 "completion_tokens": float("inf"),
                                                                 "total_tokens": float("-inf")}})
        cfg = RunConfig(backend="llm", llm=_cfg(srv))
        out, _ = drive(fake_context(world, backends=make_backends(cfg)), INSTRUCTION)
    assert out.status == "succeeded" and out.graph_success
    assert out.llm_calls.tokens_in == 500 and out.llm_calls.tokens_out == 100  # the bad call counts 0, not NaN


def test_an_api_key_echoed_by_the_server_is_redacted_everywhere(tmp_path: Path) -> None:
    world = _world()
    with FakeOpenAIServer() as srv:
        _defaults(srv)
        srv.script.defaults["decomposer"] = {"status": 401, "message": "Incorrect API key provided: {auth}"}
        cfg = RunConfig(backend="llm", llm=_cfg(srv))
        trace = TraceWriter(tmp_path / "t")
        try:
            out, _ = drive(fake_context(world, backends=make_backends(cfg), trace=trace), INSTRUCTION)
        finally:
            trace.close()
        assert any(KEY in r["auth"] for r in srv.script.requests)  # the server did see (and echo) the key
    assert out.status == "refused" and out.refusal is not None
    assert "refused the API key" in out.refusal and "***" in out.refusal and KEY not in out.refusal
    assert KEY not in out.model_dump_json()
    for f in (tmp_path / "t").rglob("*"):
        if f.is_file():
            assert KEY not in f.read_text(errors="replace"), f


def test_a_500_about_the_requests_content_is_not_retried() -> None:
    sleeps: list[float] = []
    with FakeOpenAIServer() as srv:
        srv.script.add("perceptor", {"status": 500, "message": 'can only concatenate str (not "list") to str'})
        log = CallLog()
        with pytest.raises(AgentError, match="can only concatenate"):
            _ask_focus(_client(srv, sleeps), log)
        assert len(srv.script.requests) == 1 and sleeps == []


def test_the_same_500_twice_is_not_retried_further() -> None:
    sleeps: list[float] = []
    with FakeOpenAIServer() as srv:
        srv.script.defaults["perceptor"] = {"status": 500, "message": "internal failure 42"}
        with pytest.raises(AgentError, match="failed the same way twice"):
            _ask_focus(_client(srv, sleeps), CallLog())
        assert len(srv.script.requests) == 2 and len(sleeps) == 1


@pytest.mark.parametrize(("vision_probe", "verdict"), [
    ({"status": 500, "message": 'can only concatenate str (not "list") to str'}, "refuses"),
    ("I am a helpful assistant.", "ignores")])
def test_an_image_for_a_model_that_does_not_see_it_fails_at_once_naming_agent_and_model(
        vision_probe: object, verdict: str) -> None:
    with FakeOpenAIServer() as srv:
        srv.script.add("vision_probe", vision_probe)
        srv.script.defaults["perceptor"] = FOCUS
        client = _client(srv)
        with pytest.raises(AgentError) as err:
            _ask_focus(client, CallLog(), images=[np.zeros((8, 8, 3), np.uint8)])
        assert srv.script.requests == []  # the question itself was never sent, nor retried
        with pytest.raises(AgentError, match=verdict):  # checked once per endpoint and model: the same answer
            _ask_focus(client, CallLog(), images=[np.zeros((8, 8, 3), np.uint8)])
        assert len([p for p in srv.script.probes if p["decoding"] == "vision"]) <= 2
    text = str(err.value)
    assert text.startswith("perceptor:") and f"'text-model' {verdict} images" in text and "--vlm-model" in text


def test_a_vision_model_gets_the_image_in_content_parts() -> None:
    with FakeOpenAIServer() as srv:
        srv.script.defaults["perceptor"] = FOCUS
        _ask_focus(_client(srv), CallLog(), images=[np.zeros((8, 8, 3), np.uint8)])
        assert [r["content_types"] for r in srv.script.requests] == [["str", "list"]]
        assert srv.script.requests[0]["has_image"]


def test_a_silent_endpoint_ends_the_question_within_its_bound_and_never_sleeps_after_the_last_try() -> None:
    sleeps: list[float] = []
    with FakeOpenAIServer() as srv:
        srv.script.defaults["perceptor"] = {"delay_s": 4.0, "content": FOCUS}
        client = _client(srv, sleeps, timeout_s=0.6, backoff_s=0.05, decoding="prompt")
        t0 = time.monotonic()
        with pytest.raises(AgentError, match="within the 2 s allowed per question"):
            _ask_focus(client, CallLog())
        elapsed = time.monotonic() - t0
    assert client.cfg.question_bound_s == pytest.approx(1.8)
    assert elapsed < 1.8 + 1.0, elapsed
    assert len(sleeps) == len(srv.script.requests) - 1  # a wait between tries, none after the last


def test_a_failing_endpoint_with_time_to_spare_waits_only_between_tries() -> None:
    sleeps: list[float] = []
    with FakeOpenAIServer() as srv:
        srv.script.defaults["perceptor"] = {"status": 503}
        with pytest.raises(AgentError, match="unavailable after 4 tries"):
            _ask_focus(_client(srv, sleeps, decoding="prompt"), CallLog())
        assert len(srv.script.requests) == 4
    assert sleeps == [0.01, 0.02, 0.04]


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--llm-timeout", "0", "positive number of seconds"), ("--llm-timeout", "-3", "positive number of seconds"),
    ("--llm-timeout", "nan", "positive number of seconds"), ("--llm-timeout", "inf", "positive number of seconds"),
    ("--base-url", "ftp://127.0.0.1/v1", "http(s) URL"), ("--base-url", "localhost:8000", "http(s) URL"),
    ("--llm-decoding", "grammar", "--llm-decoding must be one of"),
])
def test_bad_endpoint_options_are_refused_before_anything_is_built(
        option: str, value: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", INSTRUCTION, "--task", "stack_blocks_three", "--agent-backend", "decomposer=llm",
            "--base-url", "http://127.0.0.1:9/v1", "--trace-dir", str(tmp_path / "t"), option, value]
    t0 = time.monotonic()
    assert main(args) == 2
    assert time.monotonic() - t0 < 5.0
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "t").exists()  # no world, no trace


def test_bench_refuses_a_base_url_that_is_not_http(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "--tier", "planning", "--backend", "llm", "--base-url", "file:///etc/passwd",
                 "--out", str(out), "--episodes", "1"]) == 2
    assert "http(s) URL" in capsys.readouterr().err and not out.exists()


def test_doctor_reports_models_decoding_and_vision_of_an_endpoint() -> None:
    from mallvi.diagnostics import endpoint_lines, endpoint_report

    with FakeOpenAIServer() as srv:
        srv.script.structured = {"json_object_schema"}
        report = endpoint_report(srv.base_url, None, 5.0)
    assert report["reachable"] and report["models"] == ["text-model", "vision-model"]
    assert report["model"] == "text-model" and report["decoding"] == "json_object_schema"
    assert report["vision"]["verdict"] == "sees"
    text = "\n".join(endpoint_lines(report))
    assert "schema-constrained decoding: json_object_schema" in text and "vision: sees images" in text


def test_doctor_names_an_endpoint_that_refuses_images_and_one_that_is_down() -> None:
    from mallvi.diagnostics import endpoint_lines, endpoint_report

    with FakeOpenAIServer() as srv:
        srv.script.structured = set()
        srv.script.add("vision_probe", {"status": 400, "message": "image input is not supported by this model"})
        report = endpoint_report(srv.base_url, "text-model", 5.0)
        port = srv.httpd.server_address[1]
    assert report["decoding"] == "prompt" and not report["schema_constrained"]
    assert report["vision"]["verdict"] == "refuses" and "not supported" in report["vision"]["detail"]
    assert "vision: refuses images" in "\n".join(endpoint_lines(report))
    down = endpoint_report(f"http://127.0.0.1:{port}/v1", None, 2.0)  # the server is gone now
    assert not down["reachable"] and "unreachable" in "\n".join(endpoint_lines(down))


def test_doctor_refuses_a_base_url_that_is_not_http(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--base-url", "127.0.0.1:8000"]) == 2
    assert "http(s) URL" in capsys.readouterr().err


def test_the_run_states_how_long_one_question_may_take() -> None:
    from mallvi.cli.run_options import llm_notice

    cfg = RunConfig(agent_backends={"thinker": "llm"}, llm=LlmConfig(base_url="http://127.0.0.1:8000/v1",
                                                                    timeout_s=20.0))
    line = llm_notice(cfg)
    assert "thinker via http://127.0.0.1:8000/v1" in line and "at most 60 s" in line
    assert json.dumps(cfg.llm.question_bound_s) == "60.0"


def test_a_plan_with_a_call_missing_its_object_or_target_is_re_asked_not_executed() -> None:
    world = _world()
    incomplete = json.dumps({"calls": [{"skill": "move_by_displacement", "arm": "right"},
                                       {"skill": "place_actor", "arm": "left"}]})  # what SmolLM2-135M wrote
    with FakeOpenAIServer() as srv:
        _defaults(srv)
        srv.script.add("thinker", incomplete)
        cfg = RunConfig(backend="llm", llm=_cfg(srv))
        out, _ = drive(fake_context(world, backends=make_backends(cfg)), INSTRUCTION)
        agents = srv.script.agents_called()
    assert out.status == "succeeded" and agents.count("thinker") == 2  # re-asked once, then the good plan
    assert [c[0] for c in world.calls][:2] == ["grasp_actor", "place_actor"]  # the incomplete plan never ran


def test_a_decomposition_that_contradicts_itself_is_the_models_error_re_asked_not_a_refused_instruction() -> None:
    from tests.integration.test_graph_llm_server import PLAN

    world = _world()
    onto_itself = json.dumps({  # what SmolLM2-135M answered for "stack the green block on the red block"
        "subtasks": [{"text": "stack the green block on the red block.", "action": "push",
                      "obj": {"phrase": "green_block"}, "target": {"phrase": "green_block"}}], "goal": []})
    with FakeOpenAIServer() as srv:
        _defaults(srv)
        srv.script.add("decomposer", onto_itself)
        srv.script.add("decomposer", PLAN)
        cfg = RunConfig(backend="llm", llm=_cfg(srv))
        out, _ = drive(fake_context(world, backends=make_backends(cfg)), INSTRUCTION)
        agents = srv.script.agents_called()
    assert agents.count("decomposer") == 2  # re-asked with the problem, not refused as impossible
    assert out.status == "succeeded"
    with FakeOpenAIServer() as srv:  # a model that keeps contradicting itself: a model failure, not bad input
        _defaults(srv)
        srv.script.defaults["decomposer"] = onto_itself
        out, _ = drive(fake_context(_world(), backends=make_backends(RunConfig(backend="llm", llm=_cfg(srv)))),
                       INSTRUCTION)
    assert out.status == "refused" and out.refusal_cause == "model"
    assert "itself" in (out.refusal or "")


def test_references_written_as_ids_name_their_colour_and_kind() -> None:
    world = _world()
    as_ids = json.dumps({  # SmolLM2-135M's answer: ids as phrases, no colour or label fields
        "subtasks": [{"text": "stack the green block on the red block.", "action": "stack",
                      "obj": {"phrase": "green_block"}, "target": {"phrase": "red_block"}, "relation": "on"}],
        "goal": [{"relation": "on", "args": ["green_block", "red_block"]}]})
    with FakeOpenAIServer() as srv:
        _defaults(srv)
        srv.script.add("decomposer", as_ids)
        out, _ = drive(fake_context(world, backends=make_backends(RunConfig(backend="llm", llm=_cfg(srv)))),
                       INSTRUCTION)
        agents = srv.script.agents_called()
    assert agents.count("decomposer") == 1 and out.status == "succeeded"
    red, green = world.objects["red_block"].pos, world.objects["green_block"].pos
    assert abs(green[0] - red[0]) < 1e-6 and green[2] > red[2] + 0.03  # the green block, on the red one
