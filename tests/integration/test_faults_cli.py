"""Bad user input through the CLI: a clear message on stderr, exit code 2, and nothing executed."""

from __future__ import annotations

from pathlib import Path

import pytest

from mallvi.cli import main
from mallvi.tracing.trace import read_events


def _exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # argparse errors
        return int(e.code or 0)


@pytest.mark.parametrize(("instruction", "message"), [
    ("", "empty"),
    ("xq zzv blorp", "no manipulation verb"),
    ("put the red block on the green block and the green block on the red block", "contradictory"),
    ("stack the red block on itself", "itself"),
])
def test_unusable_instructions_are_refused_before_anything_is_built(
        instruction: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "trace"
    code = _exit_code(["run", instruction, "--task", "stack_blocks_two", "--trace-dir", str(trace), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "mallvi: error:" in err and message in err
    assert not trace.exists()  # no world, no trace, no motion


def test_an_object_not_in_the_scene_is_refused_with_what_the_scene_contains(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "trace"
    code = _exit_code(["run", "pick up the purple block", "--task", "stack_blocks_two", "--perception", "sim",
                       "--trace-dir", str(trace), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "no 'the purple block' in the scene" in err and "red block" in err
    kinds = [e["kind"] for e in read_events(trace)]
    assert "actor_command" not in kinds and "fault_injected" not in kinds  # refused before any motion


@pytest.mark.parametrize(("argv", "message"), [
    (["run", "pick up the red block", "--task", "no_such_task"], "unknown scene 'no_such_task'"),
    (["run", "--task", "stack_blocks_two", "--contingency", "very hard"], "unknown contingency level"),
    (["run", "--task", "stack_blocks_two", "--contingency", "grasp_miss=1.5"], "within 0..1"),
    (["bench", "--tier", "planning", "--tasks", "no_such_task", "--episodes", "1"], "no_such_task not in tier"),
    (["bench", "--tier", "no_tier", "--episodes", "1"], "unknown tier"),
    (["bench", "--tier", "planning", "--contingency", "extreme", "--episodes", "1"], "invalid choice"),
])
def test_unknown_names_and_levels_are_exit_code_2(
        argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    argv = [*argv, "--out", str(out)] if argv[0] == "bench" else [*argv, "--trace-dir", str(out), "--quiet"]
    code = _exit_code(argv)
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
    assert not out.exists()  # nothing ran, nothing written


@pytest.mark.parametrize(("content", "message"), [
    (None, "not found"),
    ("this: [is not: a calibration\n", "not valid YAML"),
])
def test_missing_or_malformed_rig_calibration_is_exit_code_2(
        content: str | None, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calib = tmp_path / "rig_calibration.yaml"
    if content is not None:
        calib.write_text(content)
    trace = tmp_path / "trace"
    code = _exit_code(["run", "pick up the red block", "--robot", "piper", "--camera", "realsense",
                       "--calibration", str(calib), "--trace-dir", str(trace), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "calibration" in err and message in err, err
    assert not trace.exists()  # no arm was connected or moved
