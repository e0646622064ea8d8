"""A run's status says what happened and never contradicts its judged success: with --no-reflector a graph that
believes it succeeded beside a failed goal is "status: failed" (graph status: succeeded) in the text, in --json and
in the trace's run_end; a run paused at an approval exits 4 with the line that resumes it, not 1 as a failure."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from mallvi.cli import main
from mallvi.tracing.trace import read_events

# an off-target place (reported as done) that no Reflector checks: the graph believes it, the simulator does not
UNCHECKED = ["run", "stack the green block on the red block", "--task", "stack_blocks_two", "--seed", "0",
             "--no-reflector", "--contingency", "place_off=1", "--quiet"]


def _run_end(trace: Path) -> dict[str, object]:
    return next(e for e in read_events(trace) if e["kind"] == "run_end")


def test_an_unchecked_run_that_failed_says_failed_everywhere(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*UNCHECKED, "--trace-dir", str(tmp_path / "text")]) == 1
    out = capsys.readouterr().out
    assert "status: failed; success: False (simulator" in out and "graph status: succeeded" in out
    assert not [line for line in out.splitlines() if line.startswith("status: succeeded")]

    assert main([*UNCHECKED, "--trace-dir", str(tmp_path / "json"), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert (result["status"], result["success"], result["graph_status"], result["graph_success"]) == (
        "failed", False, "succeeded", True)
    for trace in ("text", "json"):
        end = _run_end(tmp_path / trace)
        assert (end["status"], end["success"], end["graph_status"]) == ("failed", False, "succeeded")


def test_a_paused_run_exits_4_with_how_to_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("p\n"))
    code = main(["run", "stack the green block on the red block", "--task", "stack_blocks_two", "--seed", "0",
                 "--approve", "--quiet", "--trace-dir", str(tmp_path / "t")])
    out = capsys.readouterr().out
    assert code == 4, out
    end = _run_end(tmp_path / "t")
    assert end["status"] == "paused" and end["thread_id"]
    assert f"paused: nothing failed; resume with --resume {end['thread_id']}" in out
    assert "status: paused; success: False (not run)" in out


def test_the_exit_codes_are_listed_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "4    paused at an approval" in text and "130  interrupted" in text
