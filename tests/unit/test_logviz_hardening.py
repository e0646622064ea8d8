"""The viewer's reader and catalog on damaged input: bad numbers and spans, links out of the folder, a reused port."""

from __future__ import annotations

import json
import logging
import shutil
import socket
from pathlib import Path

import pytest

from mallvi.logviz.app import check_serve_args
from mallvi.logviz.fulltext import MAX_SHOWN_CHARS, full_text
from mallvi.logviz.reader import load_run
from mallvi.logviz.run_index import RunCatalog

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


def write_damaged_run(directory: Path) -> None:
    """A trace whose token counts, attempts and spans are NaN, inf, huge, text, dicts or lists."""
    directory.mkdir(parents=True)
    lines = [
        '{"v": 1, "seq": 0, "t": 1000.0, "run_id": "bad", "kind": "run_start", "instruction": "stack", '
        '"task": "damaged_task", "seed": 1}',
        '{"v": 1, "seq": 1, "t": 1001.0, "run_id": "bad", "kind": "node_start", "node": "decomposer", '
        '"attempt": NaN, "subtask_index": Infinity, "run_count": -Infinity, "span": {"id": 1}, "step": "x"}',
        '{"v": 1, "seq": 2, "t": NaN, "run_id": "bad", "kind": "llm_call", "node": "decomposer", '
        '"span": ["a"], "tokens_in": NaN, "tokens_out": Infinity, "prompt": "p", "response": "r"}',
        '{"v": 1, "seq": 3, "t": 1002.0, "run_id": "bad", "kind": "llm_call", "node": "decomposer", '
        '"tokens_in": 1e400, "tokens_out": ' + "9" * 400 + ', "prompt": "p", "response": "r"}',
        '{"v": 1, "seq": 4, "t": "soon", "run_id": "bad", "kind": "node_end", "node": "decomposer", '
        '"attempt": Infinity, "span": {"id": 1}, "duration_s": NaN, "outcome": "ok", "artifacts": 7}',
        '{"v": 1, "seq": 5, "t": 1003.0, "run_id": "bad", "kind": "node_start", "node": "thinker", '
        '"attempt": 2, "span": 17}',
        '{"v": 1, "seq": 6, "t": 1004.0, "run_id": "bad", "kind": "node_end", "node": "thinker", "span": 17, '
        '"outcome": "ok"}',
        '{"v": 1, "seq": 7, "t": [1], "run_id": "bad", "kind": "error", "where": "x", "message": "m"}',
        '{"v": 1, "seq": 8, "t": 1005.0, "run_id": "bad", "kind": "run_end", "status": "failed", '
        '"success": false, "wall_s": Infinity}',
    ]
    (directory / "events.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_bad_numbers_and_spans_are_dropped_not_fatal(tmp_path: Path) -> None:
    write_damaged_run(tmp_path / "bad")
    run = load_run(tmp_path / "bad")
    assert run.outcome == "failure"
    assert [ex.label for ex in run.node_execs] == ["decomposer #1", "thinker #2"]  # NaN attempt -> 1
    assert run.node_execs[0].subtask_index is None and run.node_execs[0].span is None
    assert run.node_execs[1].span == "17" and run.node_execs[1].outcome == "ok"
    assert run.llm_calls == 2 and run.tokens == 0  # no NaN, inf or 400-digit count reaches a total
    assert run.duration_s is not None and run.duration_s == pytest.approx(5.0)


def test_the_other_runs_survive_a_damaged_one(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "run_stack", tmp_path / "run_stack")
    write_damaged_run(tmp_path / "bad")
    runs = dict(RunCatalog(tmp_path).runs())
    assert set(runs) == {"run_stack", "bad"}
    assert runs["run_stack"].instruction == "put the red cube on the green cube"


def test_links_leaving_the_folder_are_skipped_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    shutil.copytree(FIXTURES / "run_stack", root / "run_stack")
    shutil.copytree(FIXTURES / "run_stack", outside / "secret_run")
    (root / "escape").symlink_to(outside)
    (root / "inner").symlink_to(root / "run_stack")  # a link that stays inside is followed
    (root / "dangling").symlink_to(tmp_path / "nowhere")
    with caplog.at_level(logging.WARNING, logger="mallvi.logviz.run_index"):
        catalog = RunCatalog(root)
        assert catalog.keys() == ["run_stack"]
        # a link that appears while the viewer runs is skipped too, and warned about once
        (root / "later").mkdir()
        (root / "later" / "run").symlink_to(outside / "secret_run")
        catalog.scan(force=True)
        catalog.scan(force=True)
        assert [key for key, _ in catalog.runs()] == ["run_stack"]
    warnings = [r.getMessage() for r in caplog.records]
    assert sum("escape" in w and "outside" in w for w in warnings) == 1
    assert sum("later/run" in w for w in warnings) == 1


def test_a_reused_trace_folder_shows_every_run(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "run_stack", tmp_path / "t")
    shutil.copytree(FIXTURES / "real_stack_blocks_two", tmp_path / "t" / "run-2")
    assert RunCatalog(tmp_path / "t").keys() == [".", "run-2"]
    assert RunCatalog(tmp_path).keys() == ["t", "t/run-2"]


def test_the_port_of_a_viewer_just_stopped_is_free_again() -> None:
    """A browsed server that closed first leaves its port in TIME_WAIT; the pre-bind check must not refuse it."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    conn, _ = server.accept()
    conn.close()  # the server side closes first: its end of the connection waits in TIME_WAIT
    client.recv(1)
    client.close()
    server.close()
    # what the check did before: a bind without SO_REUSEADDR fails
    with socket.socket() as plain, pytest.raises(OSError):
        plain.bind(("127.0.0.1", port))
    check_serve_args(FIXTURES, "127.0.0.1", port)


def test_a_long_response_is_served_whole_behind_the_cut(tmp_path: Path) -> None:
    lines = [{"v": 1, "seq": 0, "t": 1.0, "run_id": "r", "kind": "node_start", "node": "thinker", "span": "s"},
             {"v": 1, "seq": 1, "t": 2.0, "run_id": "r", "kind": "llm_call", "node": "thinker", "span": "s",
              "prompt": [{"role": "human", "content": "go"}], "response": "x" * (3 * MAX_SHOWN_CHARS)}]
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in lines))
    run = load_run(tmp_path)
    assert full_text(run, 0, "response", 0) == "x" * (3 * MAX_SHOWN_CHARS)
    assert full_text(run, 0, "prompt", 0) == "[human]\ngo"
    assert full_text(run, 0, "response", 1) is None and full_text(run, 5, "outputs", None) is None


def test_a_trace_the_reader_cannot_summarise_is_listed_as_unreadable(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(FIXTURES / "run_stack", tmp_path / "good")
    write_damaged_run(tmp_path / "bad")
    import mallvi.logviz.reader as reader

    real = reader.summarize_events

    def fragile(directory: Path, events: list[dict[str, object]]) -> reader.RunSummary:
        if directory.name == "bad":
            raise RecursionError("a field nested too deep")
        return real(directory, events)

    monkeypatch.setattr(reader, "summarize_events", fragile)
    runs = dict(RunCatalog(tmp_path).runs())
    assert runs["bad"].outcome == "unreadable" and "nested too deep" in runs["bad"].status
    assert runs["good"].outcome == "success"
