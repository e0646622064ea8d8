"""`mallvi perceive`: the scene graph of one simulator frame on stdout, bad input rejected with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from mallvi.cli import main

pytest.importorskip("mallvi.sim_bridge.world")


def test_perceive_prints_the_scene_graph_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image = tmp_path / "seen.png"
    code = main(["perceive", "--task", "grounding_sparse", "--seed", "100001", "--json", "--image", str(image)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["scene"] == "grounding_sparse" and out["perception"] == "color"
    ids = {o["id"] for o in out["objects"]}
    assert len(ids) == 3 and all(i.endswith("_block") for i in ids)
    for oid, near in out["nearest_truth"].items():
        assert near["name"] == oid and near["distance_m"] < 0.005
    assert set(out["times_ms"]) == {"detect", "fuse", "segment", "grasp", "project"}
    img = cv2.imread(str(image))
    assert img is not None and img.shape == (360, 640, 3)


def test_perceive_builds_a_benchmark_task_as_the_bench_does(capsys: pytest.CaptureFixture[str]) -> None:
    """A benchmark episode's first frame, to look at what perception made of it (stack_bowls_three 1400003: a bowl
    standing against a robot base)."""
    code = main(["perceive", "--task", "stack_bowls_three", "--seed", "1400003", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    bowls = {near["name"] for oid, near in out["nearest_truth"].items() if "bowl" in oid and near["distance_m"] < 0.03}
    assert bowls == {"bowl1", "bowl2", "bowl3"}


@pytest.mark.parametrize(("argv", "message"), [
    (["--task", "no_such_scene"], "unknown scene 'no_such_scene'"),
    (["--task", "no_such_scene"], "benchmark tasks: grounding_sparse"),
    (["--task", "grounding_dense", "--camera", "wrist"], "unknown camera 'wrist'"),
    (["--task", "grounding_dense", "--perception", "lidar"], "invalid choice"),
    (["--task", "grounding_dense", "--seed", "x"], "invalid int value"),
    (["--task", "grounding_dense", "--image", "/no/such/dir/x.png"], "--image must be a .png path"),
])
def test_perceive_rejects_bad_input(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(["perceive", *argv])
    except SystemExit as e:  # argparse errors
        code = int(e.code or 0)
    captured = capsys.readouterr()
    assert code == 2
    assert message in captured.err and captured.out == ""
