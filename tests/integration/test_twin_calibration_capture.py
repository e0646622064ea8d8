"""`mallvi calibrate --robot twin` keeps drawing poses (a bounded set) until each arm has its views, and when an
arm still has too few it says what to try."""

from __future__ import annotations

from pathlib import Path

import pytest

from mallvi.cli import main

pytestmark = pytest.mark.slow


def test_a_seed_whose_first_poses_miss_the_right_arm_still_calibrates(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # seed 4: the right arm reaches only 2 of the first 20 poses drawn for it
    code = main(["calibrate", "--robot", "twin", "--task", "blocks_free", "--seed", "4", "--views", "5",
                 "--save-views", str(tmp_path / "views"), "--out", str(tmp_path / "c.yaml"), "--json"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert (tmp_path / "c.yaml").is_file() and "right arm: view 5/5" in err


def test_too_few_views_after_every_pose_says_what_to_try(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    import mallvi.twin.calibration_views as capture

    monkeypatch.setattr(capture, "MAX_DRAWS_PER_VIEW", 1)  # one pose per view: the right arm misses most
    code = main(["calibrate", "--robot", "twin", "--task", "blocks_free", "--seed", "4", "--views", "5",
                 "--save-views", str(tmp_path / "views"), "--out", str(tmp_path / "c.yaml")])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert "the right arm showed the board in" in err and "out of the right arm's reach" in err
    assert "another --seed" in err and "more --views" in err
    assert not (tmp_path / "c.yaml").exists()
