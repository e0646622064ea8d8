"""`mallvi run --resume ID --trace-dir DIR` continues a paused run with its own settings (recorded in its
checkpoint) and looks at the scene again before acting: in the simulator and the twin, whose worlds are rebuilt
from the seed, it redoes what the rebuilt world has undone."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from mallvi.cli import main
from tests.fixtures.calibrations import write_twin_calibration


def _run(argv: list[str], answers: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
         ) -> tuple[int, dict[str, object], str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(answers))
    code = main([*argv, "--json", "--quiet"])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip() else {}), out.err


def _events(trace: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (trace / "events.jsonl").read_text().splitlines()]


def test_a_sim_run_paused_after_a_motion_resumes_with_its_own_settings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "run"
    _, paused, _ = _run(["run", "--task", "stack_blocks_three", "--seed", "1", "--approve", "--trace-dir",
                         str(trace)], "a\np\n", monkeypatch, capsys)  # the first subtask runs, then a pause
    assert paused["status"] == "paused" and paused["subtasks"] and len(paused["subtasks"]) == 2  # type: ignore
    thread = str(paused["thread_id"])
    for extra, flag in ((["--task", "stack_blocks_two"], "--task"), (["--perception", "sim"], "--perception"),
                        (["--seed", "2"], "--seed"), (["put the red block on the blue block"], "the instruction")):
        code, _, err = _run(["run", *extra, "--resume", thread, "--trace-dir", str(trace)], "", monkeypatch, capsys)
        assert code == 2 and f"{flag} " in err and "conflicts with the paused run's" in err, err
    code, resumed, err = _run(["run", "--task", "stack_blocks_three", "--seed", "1", "--resume", thread,  # as before
                               "--trace-dir", str(trace)], "a\na\na\na\n", monkeypatch, capsys)
    assert code == 0, err
    assert resumed["success"] is True and resumed["task"] == "stack_blocks_three" and resumed["seed"] == 1
    assert resumed["trace"] == str(trace / "run-2")
    nodes = [e["node"] for e in _events(trace / "run-2") if e["kind"] == "node_end"]
    # the rebuilt world put the green block back: the resumed run scans again and redoes the first subtask
    assert nodes[0] == "descriptor", nodes
    assert nodes.count("actor") >= 2


def test_a_twin_run_paused_before_its_first_motion_resumes_and_finds_its_objects(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    calibration = write_twin_calibration(tmp_path / "c07.yaml", 0.7)
    trace = tmp_path / "run"
    _, paused, _ = _run(["run", "--robot", "twin", "--task", "stack_blocks_two", "--seed", "0", "--calibration",
                         str(calibration), "--approve", "--trace-dir", str(trace)], "p\n", monkeypatch, capsys)
    assert paused["status"] == "paused"
    code, resumed, err = _run(["run", "--resume", str(paused["thread_id"]), "--trace-dir", str(trace)],
                              "a\na\na\n", monkeypatch, capsys)
    assert code == 0, err
    assert resumed["success"] is True and str(resumed["station"]).startswith("twin")
    calibration.write_text(calibration.read_text() + "# edited\n")
    code, _, err = _run(["run", "--resume", str(paused["thread_id"]), "--trace-dir", str(trace)], "", monkeypatch,
                        capsys)
    assert code == 2 and "changed since the run paused" in err
