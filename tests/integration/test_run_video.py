"""``--video`` on ``mallvi run`` and ``mallvi bench``: a real simulator episode leaves an MP4 of its head camera that
decodes (with the same ffmpeg) to a plausible number of frames, named by the trace's ``video`` event."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mallvi.tracing.trace import read_events
from mallvi.tracing.video import FPS, count_frames


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mallvi.cli", *args], capture_output=True, text=True, timeout=600)


def _video_event(trace: Path) -> dict[str, object]:
    (event,) = [e for e in read_events(trace) if e["kind"] == "video"]
    return event


@pytest.mark.slow
def test_a_video_run_writes_a_playable_mp4_of_the_head_camera(tmp_path: Path) -> None:
    done = _cli("run", "--task", "stack_blocks_two", "--seed", "100000", "--video", "--quiet", "--json",
                "--trace-dir", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    event = _video_event(tmp_path / "run")
    path = tmp_path / "run" / str(event["path"])
    frames = count_frames(path)
    assert frames == event["frames"] == len(event["frame_t"])  # type: ignore[arg-type]
    # at least the frames the agents looked at, and about one per 0.2 s of simulated motion, not one per step
    assert 10 <= frames <= 20 * FPS * max(result["wall_s"], 1.0)
    assert (event["width"], event["height"]) == (640, 360)


@pytest.mark.slow
def test_a_bench_with_video_has_an_mp4_per_episode(tmp_path: Path) -> None:
    done = _cli("bench", "--tier", "planning", "--tasks", "place_burger_fries", "--agent", "expert", "--episodes", "2",
                "--workers", "1", "--video", "--trace-images", "none", "--quiet", "--out", str(tmp_path / "b"))
    assert done.returncode == 0, done.stderr[-2000:]
    traces = sorted(p.parent for p in (tmp_path / "b" / "traces").rglob("events.jsonl"))
    assert len(traces) == 2
    for trace in traces:
        event = _video_event(trace)
        assert count_frames(trace / str(event["path"])) == event["frames"] > 5
        assert not list((trace / "artifacts").glob("*.png"))  # --trace-images none: the video only


def test_video_on_the_real_rig_is_refused_before_anything_runs(tmp_path: Path) -> None:
    done = _cli("run", "put the red block on the blue block", "--robot", "piper", "--camera", "realsense",
                "--calibration", str(tmp_path / "missing.yaml"), "--video", "--trace-dir", str(tmp_path / "t"))
    assert done.returncode == 2
    assert "--video" in done.stderr and "Traceback" not in done.stderr
