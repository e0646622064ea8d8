"""Every `mallvi run` option is honoured or refused by each Station: the rig's honoured ones are shown on two
emulated Pipers (python-can virtual buses) and a synthetic RealSense; refusals exit with code 2 before anything is
built."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from mallvi.cli import main
from mallvi.config import ConfigError, RunConfig
from mallvi.orchestration.result import RunResult
from mallvi.orchestration.run_instruction import run
from mallvi.orchestration.stations import RigAccess, RunRequest, check_options
from mallvi.robot_drivers.piper.piper_emulator import PiperEmulator
from mallvi.robot_drivers.realsense.config_realsense import RealSenseConfig
from mallvi.robot_drivers.realsense.realsense_synthetic import SyntheticRealSense
from mallvi.robot_drivers.rig_skills.rig_skills import RigSkillsConfig
from tests.fixtures.realsense_stream import streaming
from tests.integration.test_graph_rig import H, K, W, _calibration, _frame

RIG = RunConfig(robot="piper", camera="realsense")


@pytest.fixture
def camera_feed() -> Iterator[SyntheticRealSense]:
    yield from streaming(W, H, K, *_frame())


def _on_rig(tmp_path: Path, cfg: RunConfig, feed: SyntheticRealSense,
            **request: object) -> tuple[RunResult, dict[str, int]]:
    tag = uuid.uuid4().hex[:6]
    emus = {s: PiperEmulator(f"ro_{s}_{tag}", object_width_m=0.03).start() for s in ("left", "right")}
    overrides = {"can_left": f"ro_left_{tag}", "can_right": f"ro_right_{tag}", "bus_type": "virtual",
                 "camera": RealSenseConfig(timeout_s=2.0), "use_depth_cloud": False,
                 "skills": RigSkillsConfig(ee_speed_m_s=0.4, step_m=0.02)}
    try:
        req = RunRequest(instruction="pick up the red block", calibration=_calibration(tmp_path / "rig.yaml"),
                         trace_dir=tmp_path / "trace", **request)  # type: ignore[arg-type]
        result = run(req, cfg, rig=RigAccess(overrides=overrides, camera_source=feed.syncer))
        sent = {s: e.command_count() for s, e in emus.items()}
    finally:
        for e in emus.values():
            e.close()
    return result, sent


def test_a_dry_run_on_the_rig_plans_and_stops_before_the_first_motion(tmp_path: Path,
                                                                       camera_feed: SyntheticRealSense) -> None:
    result, sent = _on_rig(tmp_path, RunConfig(robot="piper", camera="realsense", dry_run=True), camera_feed)
    assert result.status == "planned", (result.status, result.failure_report)
    assert sent == {"left": 0, "right": 0}  # no motion or configuration frame reached either arm
    calls = result.planned_calls
    assert calls and calls[0]["skill"] in ("grasp_actor", "upright_actor")
    assert result.exit_code == 0


def test_the_single_agent_ablation_runs_on_the_rig(tmp_path: Path, camera_feed: SyntheticRealSense) -> None:
    result, sent = _on_rig(tmp_path, RunConfig(robot="piper", camera="realsense", single_agent=True), camera_feed)
    assert result.success and result.status == "succeeded", result.failure_report
    assert sent["left"] > 0 and result.success_source.startswith("graph belief")


def test_a_rig_run_keeps_a_checkpoint_it_can_be_resumed_from(tmp_path: Path,
                                                              camera_feed: SyntheticRealSense) -> None:
    checkpoint = tmp_path / "ck.sqlite"
    result, _ = _on_rig(tmp_path, RunConfig(robot="piper", camera="realsense", dry_run=True), camera_feed,
                        checkpoint=checkpoint)
    assert result.status == "planned" and checkpoint.is_file() and checkpoint.stat().st_size > 0


@pytest.mark.parametrize(("cfg", "request_fields", "words"), [
    (RIG, {"task": "stack_blocks_two"}, "--task names a simulated scene"),
    (RIG, {"seed": 3}, "--seed names a simulated scene"),
    (RIG, {"instruction": None}, "needs an instruction"),
    (RunConfig(robot="piper", camera="realsense", contingency="medium"), {}, "simulated faults"),
    (RunConfig(robot="piper", camera="realsense", perception="sim"), {}, "--perception sim"),
    (RunConfig(robot="piper", camera="realsense", single_agent=True, approve=True), {}, "cannot be combined"),
    (RunConfig(robot="twin", perception="sim"), {"task": "stack_blocks_two"}, "--perception sim"),
    (RunConfig(), {"task": "stack_blocks_two", "calibration": Path("c.yaml")}, "--calibration is for"),
    (RunConfig(), {}, "--task is required"),
    (RunConfig(robot="piper", camera="sim"), {}, "mixing the simulator and the real rig"),
    (RunConfig(), {"task": "stack_blocks_two", "resume_thread": "abc"}, "--resume needs"),
])
def test_options_a_station_cannot_honour_are_refused(cfg: RunConfig, request_fields: dict[str, object],
                                                     words: str) -> None:
    fields: dict[str, object] = {"instruction": "pick up the red block", "calibration": Path("rig.yaml")}
    if cfg.robot == "sim" and cfg.camera == "sim":
        fields.pop("calibration")
    fields.update(request_fields)
    with pytest.raises(ConfigError, match=words):
        check_options(cfg, RunRequest(**fields))  # type: ignore[arg-type]


@pytest.mark.parametrize("extra", [["--task", "stack_blocks_two"], ["--seed", "4"], ["--contingency", "medium"],
                                   ["--perception", "sim"]])
def test_the_cli_refuses_rig_options_with_exit_2_and_builds_nothing(extra: list[str], tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    calibration = _calibration(tmp_path / "rig.yaml")
    code = main(["run", "pick up the red block", "--robot", "piper", "--camera", "realsense", "--calibration",
                 str(calibration), "--trace-dir", str(tmp_path / "trace"), *extra])
    assert code == 2
    assert "mallvi: error:" in capsys.readouterr().err
    assert not (tmp_path / "trace").exists() or not any((tmp_path / "trace").iterdir())
