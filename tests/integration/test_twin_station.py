"""The twin station end to end: `mallvi calibrate --robot twin`, then `mallvi run --robot twin` with that file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mallvi.cli import main
from mallvi.robot_drivers.calibration.calibration_files import load_rig_calibration, save_rig_calibration

pytestmark = pytest.mark.slow
TASK = "stack_blocks_two"


@pytest.fixture(scope="module")
def calibration(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("twin_calibration")
    out = root / "twin_calibration.yaml"
    code = main(["calibrate", "--robot", "twin", "--task", TASK, "--seed", "0", "--views", "8",
                 "--save-views", str(root / "views"), "--out", str(out), "--json"])
    assert code == 0 and out.is_file()
    return out


def test_a_twin_run_stacks_the_green_block_on_the_red_one_by_simulator_truth(
        calibration: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code = main(["run", "stack the green block on the red block", "--robot", "twin", "--task", TASK, "--seed", "0",
                 "--calibration", str(calibration), "--trace-dir", str(tmp_path / "trace"), "--json", "--quiet"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0, result.get("failure_report")
    assert result["success"] is True and result["success_source"].startswith("simulator")
    assert result["station"].startswith("twin") and result["privileged"] == ["success judged by simulator truth"]
    events = [json.loads(line) for line in (tmp_path / "trace" / "events.jsonl").read_text().splitlines()]
    start = next(e for e in events if e["kind"] == "run_start")
    assert start["station"].startswith("twin") and start["config"]["robot"] == "twin"
    skills = [e for e in events if e["kind"] == "node_end" and e["node"] == "actor"]
    assert skills and all(e["outputs"]["actor_report"]["ok"] for e in skills)


def test_a_camera_pose_3_cm_off_is_refused_before_anything_moves(
        calibration: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calib = load_rig_calibration(calibration)
    T = calib.T_world_cam.copy()
    T[2, 3] -= 0.03  # every perceived point 3 cm low: grasps would go into the table
    wrong = tmp_path / "wrong.yaml"
    from dataclasses import replace

    save_rig_calibration(wrong, replace(calib, T_world_cam=T))
    assert not np.allclose(load_rig_calibration(wrong).T_world_cam, calib.T_world_cam)
    capsys.readouterr()
    code = main(["run", "stack the green block on the red block", "--robot", "twin", "--task", TASK, "--seed", "0",
                 "--calibration", str(wrong), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "calibration check failed" in err and "below the configured" in err and "Nothing was moved" in err
    assert "Traceback" not in err
