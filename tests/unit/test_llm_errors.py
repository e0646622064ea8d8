"""What a model error means and how it is shown: secrets removed, token counts sane, content errors not retried."""

from __future__ import annotations

import httpx
import openai
import pytest

from mallvi.config import ConfigError, LlmConfig, RunConfig
from mallvi.graph.backends.llm.decoding import max_tokens_for, request_options
from mallvi.graph.backends.llm.errors import is_transient, redact, token_count


def _status_error(code: int, message: str) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(code, request=request, json={"error": {"message": message}})
    cls = {401: openai.AuthenticationError, 429: openai.RateLimitError, 500: openai.InternalServerError,
           503: openai.InternalServerError}.get(code, openai.APIStatusError)
    return cls(f"Error code: {code} - {message}", response=response, body={"error": {"message": message}})


def test_redact_removes_the_key_and_anything_shaped_like_one() -> None:
    text = "401: Incorrect API key provided: my-own-key-42; header was Bearer abcdef123456 and sk-proj-XYZ123456"
    out = redact(text, ["my-own-key-42"])
    assert "my-own-key-42" not in out and "abcdef123456" not in out and "XYZ123456" not in out
    assert out.startswith("401: Incorrect API key provided: ***")


@pytest.mark.parametrize(("value", "count"), [
    (12, 12), (12.0, 12), (float("nan"), 0), (float("inf"), 0), (-5, 0), (None, 0), ("7", 0), (True, 0)])
def test_token_counts_from_a_server_are_sane(value: object, count: int) -> None:
    assert token_count(value) == count


@pytest.mark.parametrize(("code", "message", "retry"), [
    (429, "slow down", True), (503, "overloaded", True), (500, "internal error", True),
    (500, 'can only concatenate str (not "list") to str', False), (500, "image input is not supported", False),
    (401, "bad key", False), (400, "invalid request", False)])
def test_which_status_errors_are_retried(code: int, message: str, retry: bool) -> None:
    assert is_transient(_status_error(code, message)) is retry


def test_each_decoding_mode_puts_the_schema_where_its_servers_read_it() -> None:
    schema = {"type": "object"}
    assert request_options("json_schema", schema, "A", 64)["extra_body"]["response_format"]["json_schema"][
        "schema"] == schema
    assert request_options("json_object_schema", schema, "A", 64)["extra_body"]["response_format"] == {
        "type": "json_object", "schema": schema}
    assert request_options("structured_outputs", schema, "A", 64)["extra_body"]["structured_outputs"] == {
        "json": schema}
    assert request_options("guided_json", schema, "A", 64)["extra_body"]["guided_json"] == schema
    prompt = request_options("prompt", schema, "A", 64)
    assert prompt == {"max_tokens": 64, "extra_body": {"max_tokens": 64}}
    assert "max_tokens" not in request_options("prompt", schema, "A", 64, send_max_tokens=False)["extra_body"]
    assert max_tokens_for("perceptor") < max_tokens_for("thinker") < max_tokens_for("decomposer")


@pytest.mark.parametrize("kw", [{"timeout_s": 0.0}, {"timeout_s": -1.0}, {"timeout_s": float("nan")},
                                {"timeout_s": float("inf")}, {"question_budget_s": 0.0},
                                {"backoff_s": float("nan")}, {"decoding": "grammar"}, {"max_reasks": -1}])
def test_bad_llm_settings_are_config_errors(kw: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        LlmConfig(**kw)  # type: ignore[arg-type]


def test_the_question_bound_follows_the_request_timeout_unless_given() -> None:
    assert LlmConfig(timeout_s=20.0).question_bound_s == 60.0
    assert LlmConfig(timeout_s=20.0, question_budget_s=45.0).question_bound_s == 45.0


@pytest.mark.parametrize("url", ["ftp://host/v1", "localhost:8000/v1", "http://", "/v1"])
def test_an_llm_run_needs_an_http_base_url(url: str) -> None:
    with pytest.raises(ConfigError, match="http"):
        RunConfig(backend="llm", llm=LlmConfig(base_url=url))
    RunConfig(backend="rules", llm=LlmConfig(base_url=url))  # unused by the rules backend: not checked


def test_constrained_modes_bound_every_list_of_the_answer() -> None:
    from mallvi.graph.backends.llm.agents import DecomposerAnswer, DescriptorAnswer
    from mallvi.graph.backends.llm.decoding import max_items_for

    n = max_items_for("decomposer")
    sent = request_options("json_schema", DecomposerAnswer.model_json_schema(), "A", 64, max_items=n)["extra_body"][
        "response_format"]["json_schema"]["schema"]
    sub = sent["$defs"]["Subtask"]["properties"]
    assert n is not None and sent["properties"]["subtasks"]["maxItems"] == n
    assert sub["group"]["maxItems"] == sub["post"]["maxItems"] == n
    described = request_options("json_schema", DescriptorAnswer.model_json_schema(), "A", 64,
                                max_items=max_items_for("descriptor"))["extra_body"]["response_format"]["json_schema"]
    assert "maxItems" not in described["schema"]["properties"]["objects"]  # a cluttered table may hold many
    assert "maxLength" not in sub["text"]  # llama.cpp expands it into a rule per character
    assert "maxItems" not in DecomposerAnswer.model_json_schema()["properties"]["subtasks"]  # the model's own copy


def test_a_goal_fact_with_the_wrong_number_of_objects_is_rejected_where_it_is_parsed() -> None:
    from pydantic import ValidationError

    from mallvi.graph.schemas import Predicate

    assert str(Predicate(relation="on", args=["a", "b"])) == "on(a, b)"
    with pytest.raises(ValidationError, match="on takes 2"):
        Predicate(relation="on", args=["a"])  # SmolLM2-135M wrote such goals; they crashed the consistency check
    with pytest.raises(ValidationError, match="lifted takes 1"):
        Predicate(relation="lifted", args=["a", "b"])
