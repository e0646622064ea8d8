"""One redaction for every output: a known key, any eight of its characters in a row, and anything key- or
token-shaped never reach text, records, traces or the CLI's streams; the terminal gets no bidi or other format
controls and no 200 kB model text whole; JSON on the terminal escapes them and means the same."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest
from pydantic import BaseModel

from mallvi.cli.common import MAX_PRINTED_CHARS, json_safe, redacted_output, safe
from mallvi.tracing.redaction import redact_text, redact_value, register_secret
from mallvi.tracing.trace import TraceWriter

KEY = "sk-proj-Z9y8X7w6V5u4T3s2R1q0PpOoNnMm"
TAIL = KEY[-8:]


@pytest.fixture(autouse=True)
def _key_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


@pytest.mark.parametrize("text", [
    f"I refuse. Your key is {KEY}, keep it safe.",
    f"the key ends in ...{TAIL}",  # the tail alone
    f"the key starts {KEY[:14]}",  # a cut-off head
    f"spaced: {KEY[3:20]} and {KEY[18:30]}",  # two overlapping fragments
    f'json: {json.dumps({"k": KEY})}',
])
def test_a_known_key_and_every_run_of_eight_of_its_characters_are_removed(text: str) -> None:
    out = redact_text(text)
    assert "***" in out
    for i in range(len(KEY) - 7):
        assert KEY[i:i + 8] not in out, out
    assert text.startswith(out[:out.index("***")])  # the words before it stay


@pytest.mark.parametrize(("text", "gone"), [
    ("Authorization: Bearer abc.DEF-123_xyz/=+~", "abc.DEF-123_xyz"),
    ("bearer zzzzzzzzzzzz", "zzzzzzzzzzzz"),
    ("a key sk-otherkey_123456789 in passing", "otherkey_123456789"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ('{"api_key": "short-but-secret"}', "short-but-secret"),
    ("api-key=whatever42", "whatever42"),
])
def test_key_and_token_shaped_text_is_removed_whatever_the_key(text: str, gone: str) -> None:
    out = redact_text(text)
    assert gone not in out and "***" in out, out


def test_ordinary_text_is_left_alone() -> None:
    text = "stack the green block on the red block; scikit-learn and sk-learn are fine; task-force"
    assert redact_text(text) == text


def test_a_key_registered_by_a_client_is_redacted_without_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    other = "local-server-token-4242-abcd"
    monkeypatch.delenv("OPENAI_API_KEY")
    register_secret(other)
    assert other[-8:] not in redact_text(f"echo: {other}")


class _Answer(BaseModel):
    refusal: str
    subtasks: list[str]


def test_records_are_redacted_in_values_keys_models_and_secret_named_fields() -> None:
    record = {"message": f"refused: {KEY}", KEY: 1, "llm": {"api_key": "anything at all", "password": "pw"},
              "answer": _Answer(refusal=f"no ({TAIL})", subtasks=[f"say {KEY[5:25]}"]), "n": 3, "ok": True}
    out = redact_value(record, default=lambda m: m.model_dump())
    text = json.dumps(out)
    assert KEY not in text and TAIL not in text and KEY[5:25] not in text
    assert out["llm"] == {"api_key": "***", "password": "***"} and out["n"] == 3 and out["ok"] is True


def test_the_trace_keeps_no_fragment_of_a_key_even_one_json_would_escape(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    odd = 'k3y"with\\quotes-and-more-0123456789'  # a key whose JSON form differs from its text
    monkeypatch.setenv("OPENAI_API_KEY", odd)
    with TraceWriter(tmp_path / "t") as trace:
        trace.emit("error", where="decomposer", message=f"the model said {odd} and {odd[-8:]}")
    raw = (tmp_path / "t" / "events.jsonl").read_text()
    for form in (odd, odd[-8:], json.dumps(odd)[1:-1], json.dumps(odd[-8:])[1:-1]):
        assert form not in raw
    assert json.loads(raw)["message"].startswith("the model said ***")


def test_the_cli_streams_and_logs_redact_whoever_writes(capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    with redacted_output():
        print(f"out {KEY}")
        print(f"err {TAIL}", file=sys.stderr)
        handler = logging.StreamHandler(sys.stderr)
        logging.getLogger("mallvi.test").addHandler(handler)
        try:
            logging.getLogger("mallvi.test").warning("logged %s", KEY)
        finally:
            logging.getLogger("mallvi.test").removeHandler(handler)
    out, err = capsys.readouterr()
    assert out == "out ***\n" and "err ***" in err and "logged ***" in err and KEY[-8:] not in err


@pytest.mark.parametrize("control", ["\u202e", "\u202d", "\u2066", "\u2067", "\u2068", "\u2069", "\u200b", "\u200f",
                                     "\u061c", "\ufeff", "\u2028", "\U000e0041", "\x1b[31m", "\x9b2J", "\x07"])
def test_safe_printing_strips_bidi_format_and_escape_controls(control: str) -> None:
    text = f"refused: cod{control}txt.exe is not an object"
    out = safe(text)
    assert out == "refused: codtxt.exe is not an object", repr(out)


def test_safe_printing_keeps_ordinary_unicode() -> None:
    text = "Grüße: 把红色方块放在蓝色方块上 👋 é"
    assert safe(text) == text


def test_a_200_kb_model_text_is_cut_with_a_note_of_how_much() -> None:
    text = "no. " * 50_000
    out = safe(f"refused: {text}")
    assert len(out) < MAX_PRINTED_CHARS + 80
    cut = len("refused: ") + len(text) - MAX_PRINTED_CHARS
    assert out.endswith(f"[... {cut} more characters not shown]")


def test_json_for_the_terminal_escapes_hidden_characters_and_means_the_same() -> None:
    data = {"refusal": "a\u202eb\u200bc\x9b2J d", "subtasks": ["Grüße 👋", "tag\U000e0041"], "key": KEY}
    text = json_safe(json.dumps(data, ensure_ascii=False))
    for hidden in ("\u202e", "\u200b", "\x9b", "\U000e0041", KEY, TAIL):
        assert hidden not in text
    back = json.loads(text)
    assert back["refusal"] == data["refusal"] and back["subtasks"] == data["subtasks"] and back["key"] == "***"
    assert "Grüße 👋" in text  # printable characters stay as they are


def test_a_stream_wrapper_passes_its_attributes_through() -> None:
    from mallvi.cli.common import _Redacting

    buf = io.StringIO()
    wrapped = _Redacting(buf)
    wrapped.write(f"x {KEY}\n")
    wrapped.flush()
    assert buf.getvalue() == "x ***\n" and wrapped.isatty() is False
