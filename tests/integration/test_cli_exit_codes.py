"""`mallvi run` / `demo` / `perceive` on bad input (exit 2, nothing run), a reused trace folder, an unusable model
endpoint (exit 3) and terminal escape sequences in an instruction."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from mallvi.cli import main
from mallvi.graph.checkpoint import sqlite_saver
from mallvi.tracing.trace import read_events

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.fixtures
from tests.fixtures.graph_openai_server import FakeOpenAIServer

RUN = ["run", "stack the green block on the red block", "--task", "stack_blocks_two", "--quiet"]


def _exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # argparse errors
        return int(e.code or 0)


@pytest.mark.parametrize("argv", [
    [*RUN, "--seed", str(2**32)],
    [*RUN, "--seed", "-1"],
    ["demo", "--seed", "-1"],
    ["demo", "--seed", "99999999999999999999"],
    ["perceive", "--task", "stack_blocks_two", "--seed", str(2**32)],
])
def test_seeds_outside_32_bits_are_bad_input(argv: list[str], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code([*argv, "--trace-dir", str(tmp_path / "t")] if argv[0] != "perceive" else argv) == 2
    err = capsys.readouterr().err
    assert "--seed must be between 0 and 4294967295" in err and "Traceback" not in err
    assert not (tmp_path / "t").exists()


def test_a_trace_dir_that_is_a_file_or_lies_under_one_is_bad_input(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me")
    for trace in (a_file, a_file / "sub"):
        assert _exit_code([*RUN, "--trace-dir", str(trace)]) == 2
        err = capsys.readouterr().err
        assert f"cannot write the trace to {trace}" in err and "Traceback" not in err
    assert a_file.read_text() == "keep me"


def test_checkpoints_that_are_folders_or_not_sqlite_and_unknown_threads_are_bad_input(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "ckpt_dir"
    folder.mkdir()
    junk = tmp_path / "junk.sqlite"
    junk.write_text("this is not a database")
    real = tmp_path / "real.sqlite"
    saver = sqlite_saver(real)
    saver.setup()  # a real checkpoint file, holding no run yet
    saver.conn.close()
    cases = [
        (["--approve", "--checkpoint", str(folder)], "is a folder"),
        (["--approve", "--checkpoint", str(junk)], "is not an SQLite checkpoint file"),
        (["--resume", "0123abcd", "--checkpoint", str(real)], "no paused run with that id"),
        (["--resume", "0123abcd", "--trace-dir", str(tmp_path / "never_paused")], "there is no checkpoint at"),
        (["--resume", "0123abcd"], "give the paused run's --trace-dir or --checkpoint"),
    ]
    for extra, message in cases:
        assert _exit_code([*RUN, *extra, "--trace-dir", str(tmp_path / "t")] if "--trace-dir" not in extra
                          else [*RUN, *extra]) == 2, extra
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
    assert junk.read_text() == "this is not a database"
    with sqlite3.connect(real) as conn:
        assert conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone() == (0,)
    assert not (tmp_path / "t").exists() and not (tmp_path / "never_paused").exists()


@pytest.mark.slow
def test_escape_sequences_in_an_instruction_never_reach_the_terminal(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code = _exit_code(["run", "stack the green block on the red block \x1b[2J\x1b[31m\x07\x9b0m",
                       "--task", "stack_blocks_two", "--perception", "sim", "--dry-run",
                       "--trace-dir", str(tmp_path / "t")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "instruction: stack the green block on the red block" in captured.out
    for stream in (captured.out, captured.err):
        assert not any(c in stream for c in ("\x1b", "\x07", "\x9b"))


@pytest.mark.slow
def test_a_reused_trace_dir_gives_each_run_its_own_events(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "trace"
    trace.mkdir()
    # a run killed mid-write left its events, the last line torn
    killed = ('{"v": 1, "seq": 0, "t": 1.0, "run_id": "killed", "kind": "run_start", "instruction": "x", '
              '"task": "stack_blocks_two", "seed": 0}\n{"v": 1, "seq": 1, "t": 2.0, "run_id": "kil')
    (trace / "events.jsonl").write_text(killed)
    argv = [*RUN, "--perception", "sim", "--dry-run", "--trace-dir", str(trace), "--json"]
    assert _exit_code(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert _exit_code(argv) == 0
    second = json.loads(capsys.readouterr().out)
    assert (first["trace"], second["trace"]) == (str(trace / "run-2"), str(trace / "run-3"))
    assert (trace / "events.jsonl").read_text() == killed  # the killed run's file is left as it was
    for sub in ("run-2", "run-3"):
        events = read_events(trace / sub)
        assert [e["kind"] for e in events if e["kind"] in ("run_start", "run_end")] == ["run_start", "run_end"]
        assert len({e["run_id"] for e in events}) == 1


@pytest.mark.slow
def test_a_failing_model_endpoint_exits_3_not_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAIServer() as srv:
        for agent in ("decomposer", "descriptor"):
            srv.script.defaults[agent] = {"status": 500}
        code = _exit_code([*RUN, "--backend", "llm", "--base-url", srv.base_url, "--llm-model", "m",
                           "--vlm-model", "v", "--llm-timeout", "5", "--trace-dir", str(tmp_path / "t")])
    err = capsys.readouterr().err
    assert code == 3, err
    assert "the model endpoint failed" in err and "Traceback" not in err
    assert "a device or the model endpoint was unavailable" in _help(capsys)


def _help(capsys: pytest.CaptureFixture[str]) -> str:
    assert _exit_code(["run", "--help"]) == 0
    return capsys.readouterr().out


def test_a_run_refused_after_its_trace_folder_was_claimed_leaves_no_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "t"
    assert _exit_code(["run", "stack the green block on the red block", "--task", "no_such_task",
                       "--trace-dir", str(trace), "--quiet"]) == 2
    assert "unknown scene 'no_such_task'" in capsys.readouterr().err
    assert not trace.exists()
