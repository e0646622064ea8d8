"""Trace writing: API keys never reach the file; summaries stay small; artifacts are referenced."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mallvi.tracing.capture import attempt_from_state, find_verdict, subtask_index_from_state
from mallvi.tracing.summarize import summarize
from mallvi.tracing.trace import TraceWriter, read_events

KEY = "sk-proj-A1b2C3d4E5f6G7h8I9j0KlMnOpQr"


def test_api_keys_never_appear_in_the_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "plainsecretvalue42")
    with TraceWriter(tmp_path, secrets=["given-secret-123"]) as w:
        w.emit(
            "run_start",
            instruction="go",
            task="t",
            seed=1,
            config={"base_url": "http://127.0.0.1:9/v1", "api_key": "not-shaped-like-a-key", "model": "m"},
        )
        w.emit(
            "llm_call",
            node="thinker",
            model="m",
            prompt=[{"role": "human", "content": f"key={KEY}"}],
            response="Authorization: Bearer abcdefghijklmnop",
            latency_s=0.1,
            tokens_in=1,
            tokens_out=2,
        )
        w.emit("error", where="llm", message="401 for key plainsecretvalue42 and given-secret-123")
    text = (tmp_path / "events.jsonl").read_text()
    for secret in (KEY, "plainsecretvalue42", "given-secret-123", "not-shaped-like-a-key", "abcdefghijklmnop"):
        assert secret not in text
    events = read_events(tmp_path)
    assert events[0]["config"]["api_key"] == "***" and events[0]["config"]["model"] == "m"
    assert events[1]["prompt"][0]["content"] == "key=***" and events[1]["tokens_in"] == 1


def test_unknown_kinds_are_refused_and_images_are_saved_as_referenced_pngs(tmp_path: Path) -> None:
    with TraceWriter(tmp_path) as w:
        with pytest.raises(ValueError, match="unknown trace event kind"):
            w.emit("nonsense")
        rel = w.save_image("head cam", np.zeros((4, 6, 3), np.uint8), node="perceptor", boxes=[[0, 0, 2, 2, "a", 0.9]])
    assert (tmp_path / rel).is_file() and rel.endswith("head_cam.png")
    (event,) = read_events(tmp_path)
    assert event["kind"] == "artifact" and event["path"] == rel and event["meta"]["boxes"][0][4] == "a"


def test_summaries_cut_big_values() -> None:
    state = {
        "rgb": np.zeros((480, 640, 3), np.uint8),
        "note": "x" * 5000,
        "ids": list(range(100)),
        "img": "data:image/png;base64," + "A" * 1000,
    }
    out = summarize(state, max_str=100, max_items=10)
    assert out["rgb"] == "<ndarray 480x640x3 uint8>"
    assert len(out["note"]) < 150 and "more chars" in out["note"]
    assert len(out["ids"]) == 11 and out["img"].startswith("<image/png")


def test_attempt_and_subtask_lookups_tolerate_field_names() -> None:
    assert attempt_from_state({"subtask_index": 1, "attempts": {"1": 2}}) == 3
    assert attempt_from_state({"current_index": 1, "attempt_counts": [0, 1]}) == 2
    assert attempt_from_state({"attempt": 4}) == 4
    assert attempt_from_state({"subtask_index": 0, "attempts": {}}) == 1
    assert attempt_from_state({"unrelated": 1}) is None
    assert subtask_index_from_state({"current_subtask": {"index": 3}}) == 3
    verdict = find_verdict({"reflection": {"verdict": "failure", "blame": "grounder", "reason": "wrong cube"}})
    assert verdict == {
        "verdict": "failure",
        "blamed_agent": "grounder",
        "failure_category": None,
        "explanation": "wrong cube",
    }
    assert find_verdict({"answers": ["a"]}) is None


def test_verdict_found_inside_a_pydantic_model() -> None:
    from pydantic import BaseModel

    class Verdict(BaseModel):
        verdict: str
        blamed_agent: str | None = None
        failure_category: str | None = None
        explanation: str = ""

    found = find_verdict({"verdict": Verdict(verdict="failure", blamed_agent="actor", explanation="dropped")})
    assert found is not None and found["verdict"] == "failure" and found["blamed_agent"] == "actor"


def test_a_picture_equal_to_the_last_one_is_referenced_not_written_again(tmp_path: Path) -> None:
    from PIL import Image

    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, (36, 64, 3), dtype=np.uint8)
    b = a.copy()
    b[0, 0] ^= 1
    with TraceWriter(tmp_path) as w:
        first = w.save_image("scan", a, node="descriptor")
        again = w.save_image("grounder", a.copy(), node="grounder")  # an equal picture, another array
        other = w.save_image("reflector", b, node="reflector")
    assert again == first and other != first
    assert len(list((tmp_path / "artifacts").iterdir())) == 2
    assert [e["path"] for e in read_events(tmp_path) if e["kind"] == "artifact"] == [first, first, other]
    assert np.array_equal(np.asarray(Image.open(tmp_path / first)), a)  # lossless
    assert np.array_equal(np.asarray(Image.open(tmp_path / other)), b)
