"""`mallvi bench --station twin` and `mallvi run --robot twin` check the calibration once, before anything runs:
a bad file or one of another arm layout is refused with exit 2 and nothing recorded; the calibration's content is
part of the run's identity; an episode the calibration cannot serve is not recorded as done."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.runner import RunDirError, prepare_dir, run_bench
from mallvi.cli import main
from mallvi.robot_drivers.calibration.calibration_files import CalibrationFileError, save_rig_calibration
from tests.fixtures.calibrations import twin_calibration, write_twin_calibration


def _bench(out: Path, calibration: Path, tasks: str, tier: str = "planning") -> list[str]:
    return ["bench", "--tier", tier, "--tasks", tasks, "--episodes", "1", "--station", "twin",
            "--calibration", str(calibration), "--out", str(out), "--workers", "1", "--quiet"]


def test_a_run_on_the_twin_refuses_a_calibration_of_another_arm_layout(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    calibration = write_twin_calibration(tmp_path / "c07.yaml", 0.7)
    trace = tmp_path / "trace"
    code = main(["run", "--robot", "twin", "--task", "blocks_ranking_rgb", "--calibration", str(calibration),
                 "--trace-dir", str(trace), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "0.70 m apart" in err and "0.60 m apart" in err and "blocks_ranking_rgb" in err
    assert "mallvi calibrate --robot twin --task blocks_ranking_rgb" in err
    assert not trace.exists()


def test_a_malformed_calibration_stops_a_twin_run_before_its_trace_folder_exists(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calibration = write_twin_calibration(tmp_path / "c.yaml")
    calibration.write_text(calibration.read_text().replace("width: 640", "width: .inf"))
    trace = tmp_path / "trace"
    code = main(["run", "--robot", "twin", "--task", "stack_blocks_two", "--calibration", str(calibration),
                 "--trace-dir", str(trace), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and str(calibration) in err and "camera.width" in err and "Traceback" not in err
    assert not trace.exists()


def test_the_bench_says_which_tasks_a_calibration_serves_and_refuses_the_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calibration = write_twin_calibration(tmp_path / "c07.yaml", 0.7)
    out = tmp_path / "bench"
    code = main(_bench(out, calibration, "place_cans_plasticbox,blocks_ranking_rgb,blocks_tower"))
    err = capsys.readouterr().err
    assert code == 2, err
    assert "serves place_cans_plasticbox" in err
    assert "arms 0.60 m apart (blocks_ranking_rgb, blocks_tower)" in err
    assert "mallvi calibrate --robot twin --task blocks_ranking_rgb" in err
    assert not (out / "episodes.jsonl").exists() and not (out / "run.json").exists()


def test_a_bad_calibration_stops_the_bench_before_any_episode(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    calibration = write_twin_calibration(tmp_path / "c.yaml")
    data = yaml.safe_load(calibration.read_text())
    data["arms"]["right"]["views"] = float("inf")
    calibration.write_text(yaml.safe_dump(data))
    out = tmp_path / "bench"
    code = main(_bench(out, calibration, "stack_blocks_two", "fine"))
    err = capsys.readouterr().err
    assert code == 2 and str(calibration) in err and "arms.right.views" in err and "Traceback" not in err
    assert not (out / "episodes.jsonl").exists()


def test_the_calibration_content_is_part_of_a_twin_run_identity(tmp_path: Path) -> None:
    calibration = write_twin_calibration(tmp_path / "c.yaml")
    cfg = BenchConfig(tier="fine", tasks=("stack_blocks_two",), episodes=1, station="twin",
                      calibration=str(calibration))
    out = tmp_path / "bench"
    prepare_dir(cfg, out)
    assert json.loads((out / "run.json").read_text())["identity"]["calibration_sha256"] == cfg.calibration_sha256
    prepare_dir(cfg, out)  # the same file: the run resumes
    moved = twin_calibration(0.7)
    T = moved.arms["right"].T_world_base.copy()
    T[0, 3] += 0.01  # re-calibrated after the right arm moved a centimetre: same path, other content
    save_rig_calibration(calibration, replace(moved, arms={**moved.arms,
                                                           "right": replace(moved.arms["right"], T_world_base=T)}))
    again = BenchConfig(tier="fine", tasks=("stack_blocks_two",), episodes=1, station="twin",
                        calibration=str(calibration))
    with pytest.raises(RunDirError, match="other settings"):
        prepare_dir(again, out)
    sim = BenchConfig(tier="fine", tasks=("stack_blocks_two",), episodes=1)
    assert sim.identity() == {"tier": "fine", "seed_start": 100000, "agent": "mallvi", "backend": "rules",
                              "perception": "color", "contingency": "none", "randomization": "original"}


def test_an_episode_the_calibration_cannot_serve_is_not_recorded(tmp_path: Path) -> None:
    good = twin_calibration(0.7)
    T = good.T_world_cam.copy()
    T[2, 3] -= 0.03  # the camera 3 cm lower than calibrated: the twin's table check refuses it
    calibration = save_rig_calibration(tmp_path / "low.yaml", replace(good, T_world_cam=T))
    cfg = BenchConfig(tier="fine", tasks=("stack_blocks_two",), episodes=2, station="twin",
                      calibration=str(calibration))
    out = tmp_path / "bench"
    with pytest.raises(CalibrationFileError, match="calibration check failed"):
        run_bench(cfg, out, workers=1)
    assert (out / "episodes.jsonl").read_text() == ""
    assert not (out / "traces" / "stack_blocks_two" / "100000").exists()


def test_a_calibration_changed_during_a_run_stops_it_unrecorded(tmp_path: Path) -> None:
    calibration = write_twin_calibration(tmp_path / "c.yaml")
    cfg = BenchConfig(tier="fine", tasks=("stack_blocks_two",), episodes=1, station="twin",
                      calibration=str(calibration))
    calibration.write_text(calibration.read_text() + "# edited\n")
    with pytest.raises(CalibrationFileError, match="changed since this benchmark run started"):
        run_bench(cfg, tmp_path / "bench", workers=1)
    assert (tmp_path / "bench" / "episodes.jsonl").read_text() == ""


@pytest.mark.slow
def test_a_twin_episode_is_recorded_as_the_twin_with_its_own_privileges(tmp_path: Path) -> None:
    calibration = write_twin_calibration(tmp_path / "c07.yaml", 0.7)
    cfg = BenchConfig(tier="fine", tasks=("stack_blocks_two",), episodes=1, station="twin",
                      calibration=str(calibration), save_images=False)
    out = tmp_path / "bench"
    results = run_bench(cfg, out, workers=1)
    twin = ["success judged by simulator truth"]
    (record,) = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert record["station"].startswith("twin") and record["privileged"] == twin, record
    events = [json.loads(line) for line in (out / record["trace"] / "events.jsonl").read_text().splitlines()]
    start = next(e for e in events if e["kind"] == "run_start")
    assert start["station"] == record["station"] and start["privileged"] == twin
    assert results["privileged"] == twin
