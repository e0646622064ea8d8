"""`mallvi calibrate --from-dir` on synthetic ChArUco views rendered at known poses recovers the rig geometry."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.spatial.transform import Rotation

from mallvi.cli import main
from mallvi.robot_drivers.calibration.calibration_files import (
    CalibrationFileError,
    CalibrationViews,
    load_rig_calibration,
    mount_matrix,
    save_views,
    write_view_image,
)
from mallvi.robot_drivers.calibration.eye_to_hand import BoardSpec, render_board_view

W, H = 1280, 720
K = np.array([[900.0, 0, (W - 1) / 2], [0, 900.0, (H - 1) / 2], [0, 0, 1]])
BOARD = BoardSpec()
T_WORLD_LEFT = mount_matrix(-0.30, -0.30, 0.95, 90.0)  # the anchor mount, as configured
T_WORLD_RIGHT = mount_matrix(0.307, -0.296, 0.952, 91.5)  # the truth the calibration must find


def _look_at(eye: np.ndarray, target: np.ndarray) -> np.ndarray:
    z = (target - eye) / np.linalg.norm(target - eye)
    x = np.cross(z, [0.0, 0.0, 1.0])
    x /= np.linalg.norm(x)
    T = np.eye(4)
    T[:3, :3] = np.column_stack([x, np.cross(z, x), z])
    T[:3, 3] = eye
    return T


T_WORLD_CAM = _look_at(np.array([0.05, 0.55, 1.55]), np.array([0.0, -0.1, 0.85]))


def _pose_error(T_est: np.ndarray, T_true: np.ndarray) -> tuple[float, float]:
    d = np.linalg.inv(T_true) @ T_est
    return 1000.0 * float(np.linalg.norm(d[:3, 3])), float(np.degrees(np.linalg.norm(
        Rotation.from_matrix(d[:3, :3]).as_rotvec())))


def make_views(folder: Path, per_arm: int = 8, seed: int = 3) -> None:
    rng = np.random.default_rng(seed)
    T_flange_board = np.eye(4)
    T_flange_board[:3, :3] = Rotation.from_rotvec([0.0, 0.0, 0.3]).as_matrix()
    T_flange_board[:3, 3] = [-0.10, -0.14, 0.05]
    views = []
    w, h = BOARD.size_m
    for side, T_world_base in (("left", T_WORLD_LEFT), ("right", T_WORLD_RIGHT)):
        T_base_cam = np.linalg.inv(T_world_base) @ T_WORLD_CAM
        for _ in range(per_arm):
            rot = Rotation.from_rotvec(rng.uniform(-0.5, 0.5, 3) * np.array([1.0, 1.0, 0.6]))
            centre = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08), rng.uniform(0.55, 0.8)])
            T_cam_board = np.eye(4)
            T_cam_board[:3, :3] = rot.as_matrix()
            T_cam_board[:3, 3] = centre - rot.apply([w / 2, h / 2, 0.0])
            rgb = render_board_view(BOARD, T_cam_board, K, W, H)
            T_base_flange = T_base_cam @ T_cam_board @ np.linalg.inv(T_flange_board)
            views.append(write_view_image(folder, side, len(views), rgb, T_base_flange))  # type: ignore[arg-type]
    save_views(folder, CalibrationViews(BOARD, K, np.zeros(5), W, H, views))


@pytest.fixture(scope="module")
def views_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("views")
    make_views(folder)
    return folder


def test_calibrate_from_dir_recovers_camera_and_right_mount(views_dir: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rig.yaml"
    code = main(["calibrate", "--from-dir", str(views_dir), "--out", str(out), "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["arms"]["left"]["views"] == 8 and report["arms"]["right"]["views"] == 8
    assert report["arms"]["left"]["residual_mm_mean"] < 1.0
    calib = load_rig_calibration(out)
    mm, deg = _pose_error(calib.T_world_cam, T_WORLD_CAM)
    assert mm < 2.0 and deg < 0.5, (mm, deg)
    mm, deg = _pose_error(calib.arms["right"].T_world_base, T_WORLD_RIGHT)
    assert mm < 2.0 and deg < 0.5, (mm, deg)
    assert np.allclose(calib.arms["left"].T_world_base, T_WORLD_LEFT, atol=1e-9)
    assert np.allclose(calib.K, K)


def test_too_few_views_is_reported_as_a_failure(views_dir: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    data = yaml.safe_load((views_dir / "views.yaml").read_text())
    few = tmp_path / "few"
    few.mkdir()
    data["views"] = [v for v in data["views"] if v["arm"] == "left"][:3]
    for v in data["views"]:
        (few / v["image"]).write_bytes((views_dir / v["image"]).read_bytes())
    (few / "views.yaml").write_text(yaml.safe_dump(data))
    assert main(["calibrate", "--from-dir", str(few), "--out", str(tmp_path / "x.yaml")]) == 1
    assert "need at least 5 views" in capsys.readouterr().err
    assert not (tmp_path / "x.yaml").exists()


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("camera"), "missing key 'camera'"),
        (lambda d: d["views"][0].update(arm="middle"), "arm must be 'left' or 'right'"),
        (lambda d: d["views"][0].update(T_base_flange=[[1, 0], [0, 1]]), "T_base_flange must be a finite 4x4"),
        (lambda d: d["views"][0].update(image="missing.png"), "not found"),
    ],
)
def test_malformed_views_exit_2_with_the_key_named(views_dir: Path, tmp_path: Path, mutate: object, message: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    data = yaml.safe_load((views_dir / "views.yaml").read_text())
    mutate(data)  # type: ignore[operator]
    bad = tmp_path / "bad"
    bad.mkdir()
    for v in data.get("views", []):
        src = views_dir / str(v["image"])
        if src.is_file():
            (bad / src.name).write_bytes(src.read_bytes())
    (bad / "views.yaml").write_text(yaml.safe_dump(data))
    assert main(["calibrate", "--from-dir", str(bad), "--out", str(tmp_path / "x.yaml")]) == 2
    assert message in capsys.readouterr().err


def test_bad_command_lines_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "--from-dir", str(tmp_path / "nope"), "--out", str(tmp_path / "x.yaml")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["calibrate", "--from-dir", str(tmp_path), "--out", "x.yaml", "--anchor-mount", "1,2"]) == 2
    assert "--anchor-mount" in capsys.readouterr().err
    assert main(["calibrate", "--out", "x.yaml"]) == 2  # capture mode needs a folder for the views
    assert "--save-views" in capsys.readouterr().err
    assert main(["calibrate", "--out", "x.yaml", "--save-views", str(tmp_path), "--board-marker-m", "0.05"]) == 2
    assert "marker_m < square_m" in capsys.readouterr().err


def test_load_rig_calibration_errors(tmp_path: Path) -> None:
    with pytest.raises(CalibrationFileError, match="not found"):
        load_rig_calibration(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\ncamera: {K: [[1,0,0],[0,1,0],[0,0,1]], width: 4, height: 3,\n"
                   "  T_world_cam: [[2,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}\n"
                   "arms: {left: {T_world_base: [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],\n"
                   "  T_base_cam: [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}}\n")
    with pytest.raises(CalibrationFileError, match=r"camera\.T_world_cam is not a rigid transform"):
        load_rig_calibration(bad)
    bad.write_text("[1, 2")
    with pytest.raises(CalibrationFileError, match="not valid YAML"):
        load_rig_calibration(bad)
