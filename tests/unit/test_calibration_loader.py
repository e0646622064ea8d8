"""The calibration loader: malformed, hostile and implausible files are refused quickly with the file and the key
named; a good file loads unchanged."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from mallvi.robot_drivers.calibration.calibration_files import (
    CalibrationFileError,
    load_rig_calibration,
    mount_matrix,
)
from tests.fixtures.calibrations import TWIN_K, write_twin_calibration


def write_good(path: Path) -> Path:
    return write_twin_calibration(path, 0.7)


def _mutated(tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    path = write_good(tmp_path / "good.yaml")
    data = yaml.safe_load(path.read_text())
    change(data)
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data, sort_keys=False))
    return bad


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        keys = path.split(".")
        node: Any = data
        for k in keys[:-1]:
            node = node[int(k)] if isinstance(node, list) else node[k]
        last = keys[-1]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return change


def test_a_good_calibration_loads_as_written(tmp_path: Path) -> None:
    calib = load_rig_calibration(write_good(tmp_path / "c.yaml"))
    assert calib.width == 640 and calib.height == 480
    assert np.allclose(calib.arms["right"].T_world_base[:3, 3], (0.35, -0.30, 0.95))
    assert np.allclose(calib.K, TWIN_K)


@pytest.mark.parametrize(("change", "key", "why"), [
    (_set("camera.width", float("inf")), "camera.width", "whole number"),
    (_set("camera.width", [640]), "camera.width", "whole number"),
    (_set("camera.width", 0), "camera.width", "between 1 and"),
    (_set("camera.height", -480), "camera.height", "between 1 and"),
    (_set("arms.left.views", float("inf")), "arms.left.views", "whole number"),
    (_set("camera.K.0.2", [320.0]), "camera.K", "[0][2]"),
    (_set("camera.dist", 0.0), "camera.dist", "list of 5"),
    (_set("arms.right.residual_mm", [0.2, 0.4]), "arms.right.residual_mm", "mapping"),
    (_set("camera.T_world_cam.0.3", 10**4000), "camera.T_world_cam", "4001 digits"),
    (_set("arms.right.T_world_base.0.3", 1e300), "arms.right.T_world_base", "at most"),
    (_set("arms.right.T_world_base.2.3", float("nan")), "arms.right.T_world_base", "[2][3]"),
    (_set("arms.right.T_world_base.0.0", 2.0), "arms.right.T_world_base", "not a rigid transform"),
    (_set("board.squares_x", "many"), "board.squares_x", "whole number"),
    (_set("anchor", ["left"]), "anchor", "text"),
])
def test_a_malformed_value_is_refused_naming_the_file_and_the_key(tmp_path: Path, change: Any, key: str,
                                                                   why: str) -> None:
    bad = _mutated(tmp_path, change)
    with pytest.raises(CalibrationFileError) as info:
        load_rig_calibration(bad)
    message = str(info.value)
    assert str(bad) in message and key in message and why in message, message


@pytest.mark.parametrize(("change", "why"), [
    (_set("arms.right.T_world_base", mount_matrix(-0.35, -0.30, 0.95, 90.0).tolist()), "cm apart"),
    (_set("arms.right.T_world_base", mount_matrix(0.35, -0.30, -0.05, 90.0).tolist()), "higher than the other"),
    (_set("camera.K", [[0.0] * 3] * 3), "focal lengths must be positive"),
    (_set("camera.K.1.1", -625.0), "focal lengths must be positive"),
    (_set("camera.K.0.2", 5000.0), "principal point"),
    (_set("camera.T_world_cam.0.3", 9.0), "from the camera"),
])
def test_an_implausible_calibration_is_refused_with_its_reason(tmp_path: Path, change: Any, why: str) -> None:
    bad = _mutated(tmp_path, change)
    with pytest.raises(CalibrationFileError) as info:
        load_rig_calibration(bad)
    assert str(bad) in str(info.value) and why in str(info.value), str(info.value)


def test_a_5000_digit_integer_is_refused_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "digits.yaml"
    bad.write_text(write_good(tmp_path / "good.yaml").read_text().replace("width: 640", "width: " + "9" * 5000))
    with pytest.raises(CalibrationFileError, match=str(bad)):
        load_rig_calibration(bad)


def test_deep_nesting_is_refused_quickly(tmp_path: Path) -> None:
    bad = tmp_path / "deep.yaml"
    bad.write_text("version: 1\ncamera: " + "[" * 100_000 + "]" * 100_000 + "\n")
    t0 = time.perf_counter()
    with pytest.raises(CalibrationFileError, match="nested more than"):
        load_rig_calibration(bad)
    assert time.perf_counter() - t0 < 2.0


def test_an_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    lines = ["version: 1", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]")
    lines.append("camera: {K: *a9, width: 640, height: 480}")
    bad = tmp_path / "bomb.yaml"
    bad.write_text("\n".join(lines) + "\n")
    t0 = time.perf_counter()
    with pytest.raises(CalibrationFileError, match="aliases"):
        load_rig_calibration(bad)
    assert time.perf_counter() - t0 < 2.0


def test_an_oversized_or_binary_file_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("version: 1\n# " + "x" * (5 * 1024 * 1024) + "\n")
    with pytest.raises(CalibrationFileError, match="larger than"):
        load_rig_calibration(big)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"version: 1\ncamera: \xff\xfe\n")
    with pytest.raises(CalibrationFileError, match="not UTF-8"):
        load_rig_calibration(binary)
    with pytest.raises(CalibrationFileError, match="not a regular file"):
        load_rig_calibration(tmp_path)
