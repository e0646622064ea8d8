"""`mallvi calibrate --from-dir` reads only images inside the views folder, and a view it cannot read is bad
input (exit 2, the file and the entry named), never a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from mallvi.cli import main
from mallvi.robot_drivers.calibration.calibration_files import mount_matrix

K = [[625.0, 0.0, 320.0], [0.0, 625.0, 240.0], [0.0, 0.0, 1.0]]


def write_views(folder: Path, images: list[str], **camera: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    pose = mount_matrix(0.2, 0.0, 0.3, 10.0).tolist()
    data = {"board": {"squares_x": 5, "squares_y": 7, "square_m": 0.03, "marker_m": 0.022},
            "camera": {"K": K, "dist": [0.0] * 5, "width": 640, "height": 480, **camera},
            "views": [{"arm": "left", "image": name, "T_base_flange": pose} for name in images]}
    (folder / "views.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


@pytest.mark.parametrize("name", ["../../../../etc/passwd", "/etc/passwd", "sub/../../outside.png", "link.png",
                                  "bad\x00.png"])
def test_an_image_path_outside_the_views_folder_is_refused(tmp_path: Path, name: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "outside.png").write_bytes(b"not read")
    folder = write_views(tmp_path / "views", [name])
    (folder / "sub").mkdir()
    (folder / "link.png").symlink_to(tmp_path / "outside.png")  # a link inside that leads outside
    code = main(["calibrate", "--from-dir", str(folder), "--out", str(tmp_path / "out.yaml")])
    err = capsys.readouterr().err
    assert code == 2
    assert "views[0].image" in err and str(folder / "views.yaml") in err
    assert "outside the views folder" in err or "cannot be resolved" in err
    assert "Traceback" not in err and not (tmp_path / "out.yaml").exists()


def test_an_unreadable_or_mis_sized_image_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_views(tmp_path / "views", [f"v{i}.png" for i in range(5)])
    for i in range(5):
        (folder / f"v{i}.png").write_text("root:x:0:0:root:/root:/bin/bash\n")
    code = main(["calibrate", "--from-dir", str(folder), "--out", str(tmp_path / "out.yaml")])
    err = capsys.readouterr().err
    assert code == 2 and "'v0.png' is not an image" in err and "Traceback" not in err
    import cv2

    for i in range(5):
        cv2.imwrite(str(folder / f"v{i}.png"), np.zeros((100, 120, 3), np.uint8))
    code = main(["calibrate", "--from-dir", str(folder), "--out", str(tmp_path / "out.yaml")])
    err = capsys.readouterr().err
    assert code == 2 and "120x100 pixels" in err and "640x480" in err


@pytest.mark.parametrize(("camera", "key"), [({"width": float("inf")}, "camera.width"),
                                             ({"width": [640]}, "camera.width"),
                                             ({"height": -1}, "camera.height"),
                                             ({"K": [[0.0] * 3] * 3}, "camera.K")])
def test_a_bad_camera_entry_in_views_yaml_is_named(tmp_path: Path, camera: dict[str, Any], key: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_views(tmp_path / "views", [], **camera)
    code = main(["calibrate", "--from-dir", str(folder), "--out", str(tmp_path / "out.yaml")])
    err = capsys.readouterr().err
    assert code == 2 and key in err and str(folder / "views.yaml") in err and "Traceback" not in err
