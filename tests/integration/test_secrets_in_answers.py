"""A model that echoes the API key inside an otherwise valid answer (its refusal, a subtask's text) puts neither
the key nor its tail anywhere mallvi writes: `mallvi run`'s stdout (text and --json) and stderr (debug logs
included), the trace, and the bench's episodes.jsonl, results.json, table.md and traces. A refusal with bidi
controls and 200 kB of text reaches the terminal stripped and cut, and the trace whole."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from mallvi.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.fixtures
from tests.fixtures.graph_openai_server import FakeOpenAIServer

KEY = "sk-live-EchoedBack-0123456789abcdefXYZ"
FRAGMENTS = (KEY, KEY[-8:], KEY[3:19])
INSTRUCTION = "stack the green block on the red block"


def _plan(text: str, refusal: str | None = None) -> str:
    return json.dumps({
        "subtasks": [{"text": text, "action": "stack",
                      "obj": {"phrase": "the green block", "color": "green", "label": "block"},
                      "target": {"phrase": "the red block", "color": "red", "label": "block"}, "relation": "on",
                      "post": [{"relation": "on", "args": ["green_block", "red_block"]}]}],
        "goal": [{"relation": "on", "args": ["green_block", "red_block"]}], "refusal": refusal})


REFUSAL = _plan(INSTRUCTION, refusal=f"I will not do that. Authorization: Bearer {KEY} (ends {KEY[-8:]})")
ECHO_IN_SUBTASK = _plan(f"stack the green block on the red block, key {KEY}; tail {KEY[-8:]}")


def _assert_clean(*texts: str) -> None:
    for text in texts:
        for fragment in FRAGMENTS:
            assert fragment not in text, f"{fragment!r} leaked in: ...{text[max(0, text.find(fragment) - 200):][:400]}"


def _files_text(folder: Path) -> str:
    return "\n".join(f.read_text(errors="replace") for f in sorted(folder.rglob("*")) if f.is_file()
                     and f.suffix in (".jsonl", ".json", ".md", ".txt", ".log"))


def _run(srv: FakeOpenAIServer, trace: Path, *extra: str) -> int:
    return main(["-v", "run", INSTRUCTION, "--task", "stack_blocks_two", "--seed", "0", "--backend", "rules",
                 "--agent-backend", "decomposer=llm", "--base-url", srv.base_url, "--llm-model", "m",
                 "--vlm-model", "v", "--llm-timeout", "10", "--trace-dir", str(trace), *extra])


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def test_a_key_echoed_in_a_refusal_reaches_neither_json_nor_stderr_nor_the_trace(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAIServer() as srv:
        srv.script.defaults["decomposer"] = REFUSAL
        code = _run(srv, tmp_path / "t", "--json")
        assert any(KEY in r["auth"] for r in srv.script.requests)  # the server did get the key
    out, err = capsys.readouterr()
    assert code == 2, err  # the model refused the instruction: bad input as far as the run is concerned
    result = json.loads(out)
    assert result["status"] == "refused" and result["refusal"].startswith("I will not do that.")
    assert "Bearer ***" in result["refusal"] and "mallvi: error: refused: I will not do that." in err
    _assert_clean(out, err, _files_text(tmp_path / "t"))


def test_a_key_echoed_in_a_subtask_reaches_neither_the_summary_nor_the_logs_nor_the_trace_nor_the_checkpoint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("p\n"))  # pause at the first approval: the state is checkpointed
    with FakeOpenAIServer() as srv:
        srv.script.defaults["decomposer"] = ECHO_IN_SUBTASK
        code = _run(srv, tmp_path / "t", "--approve")
    out, err = capsys.readouterr()
    assert code == 4, err  # paused
    assert "subtask 0: stack the green block on the red block, key ***; tail ***" in out
    assert "status: paused" in out
    events = [json.loads(line) for line in (tmp_path / "t" / "events.jsonl").read_text().splitlines()]
    assert any(e["kind"] == "llm_call" and e["node"] == "decomposer" for e in events)
    checkpoint = b"".join(f.read_bytes() for f in (tmp_path / "t").glob("checkpoints.sqlite*"))  # WAL included
    assert b"stack the green block on the red block, key ***" in checkpoint
    _assert_clean(out, err, _files_text(tmp_path / "t"), checkpoint.decode("latin-1"))


def test_a_key_echoed_in_an_episode_reaches_no_bench_file(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "bench"
    with FakeOpenAIServer() as srv:
        srv.script.defaults["decomposer"] = REFUSAL
        code = main(["bench", "--tier", "planning", "--tasks", "stack_blocks_three", "--episodes", "1",
                     "--backend", "rules", "--agent-backend", "decomposer=llm", "--base-url", srv.base_url,
                     "--llm-model", "m", "--vlm-model", "v", "--llm-timeout", "10", "--workers", "1",
                     "--no-images", "--out", str(out_dir), "--json"])
        assert any(KEY in r["auth"] for r in srv.script.requests)
    out, err = capsys.readouterr()
    assert code == 0, err
    records = [json.loads(line) for line in (out_dir / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 1 and "I will not do that." in json.dumps(records[0])  # the refusal is recorded
    assert {"episodes.jsonl", "results.json", "table.md"} <= {p.name for p in out_dir.iterdir()}
    assert list((out_dir / "traces").rglob("events.jsonl"))
    _assert_clean(out, err, _files_text(out_dir))


def test_a_200_kb_refusal_with_bidi_controls_reaches_the_terminal_stripped_and_cut(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    long_text = "\u202eeno kcolb eht\u202c " + "no " * 70_000
    with FakeOpenAIServer() as srv:
        srv.script.defaults["decomposer"] = _plan(INSTRUCTION, refusal=long_text)
        code = _run(srv, tmp_path / "t")
    out, err = capsys.readouterr()
    assert code == 2
    for stream in (out, err):
        assert "\u202e" not in stream and "\u202c" not in stream
        assert max(len(line) for line in stream.splitlines()) < 2200
    assert "refused: eno kcolb eht no no" in out and "more characters not shown]" in out
    assert "mallvi: error: refused: eno kcolb eht" in err and "more characters not shown]" in err
    end = next(json.loads(line) for line in (tmp_path / "t" / "events.jsonl").read_text().splitlines()
               if '"run_end"' in line)
    assert end["failure_report"] == long_text  # the trace keeps the whole text
