"""The rig refuses a calibration that cannot be its own before any arm is connected: bases far from its table,
or mounts other than its known layout."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from mallvi.cli import main
from mallvi.config import ConfigError, RunConfig
from mallvi.orchestration.run_instruction import RigAccess, RunRequest, run
from mallvi.robot_drivers.calibration.calibration_files import mount_matrix, save_rig_calibration
from mallvi.robot_drivers.calibration.plausibility import ArmLayout
from tests.fixtures.calibrations import twin_calibration, write_twin_calibration


def test_a_calibration_with_the_arms_a_metre_below_the_table_is_refused(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    calib = twin_calibration(0.7)
    low = {s: replace(a, T_world_base=mount_matrix(x, -0.30, -0.25, 90.0))
           for (s, a), x in zip(calib.arms.items(), (-0.35, 0.35), strict=True)}
    path = save_rig_calibration(tmp_path / "low.yaml", replace(calib, arms=low))
    trace = tmp_path / "trace"
    code = main(["run", "pick up the red block", "--robot", "piper", "--camera", "realsense", "--calibration",
                 str(path), "--trace-dir", str(trace), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err  # refused before any CAN channel is opened (no rig here: that would be exit 3)
    assert str(path) in err and "arms.left.T_world_base" in err and "below the table top of the rig" in err
    assert not trace.exists()


def test_a_rig_whose_layout_is_known_refuses_a_calibration_of_another(tmp_path: Path) -> None:
    path = write_twin_calibration(tmp_path / "c07.yaml", 0.7)
    rig_layout = ArmLayout({s: mount_matrix(x, -0.30, 0.95, 90.0) for s, x in (("left", -0.30), ("right", 0.30))},
                           "this rig")
    with pytest.raises(ConfigError, match=r"0\.70 m apart, but this rig has them .* 0\.60 m apart"):
        run(RunRequest(instruction="pick up the red block", calibration=path),
            RunConfig(robot="piper", camera="realsense"), rig=RigAccess(layout=rig_layout))
