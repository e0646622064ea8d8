"""Trace size options and the video encoder: what a trace keeps, and an MP4 that decodes to the frames given."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from mallvi.tracing.trace import TraceWriter, read_events
from mallvi.tracing.video import STEPS_PER_FRAME, VideoRecorder, count_frames, tap_world


def _frame(i: int) -> np.ndarray:
    img = np.zeros((48, 64, 3), np.uint8)
    img[:, (i * 5) % 64] = 255  # a moving line
    return img


def test_the_recorder_writes_an_mp4_that_decodes_to_its_distinct_frames(tmp_path: Path) -> None:
    recorder = VideoRecorder(tmp_path / "v.mp4", fps=5)
    for i in range(12):
        recorder.add(_frame(i), t=100.0 + i)
    assert recorder.add(_frame(11), t=112.0) is False  # an unchanged picture is not written twice
    info = recorder.close()
    assert info is not None and info["frames"] == 12 and (info["width"], info["height"]) == (64, 48)
    assert info["frame_t"][:2] == [100.0, 101.0]
    assert count_frames(tmp_path / "v.mp4") == 12


def test_the_world_tap_keeps_observations_and_a_frame_per_motion_interval(tmp_path: Path) -> None:
    renders = {"n": 0}

    class World:
        def observe(self, camera: str = "head") -> SimpleNamespace:
            renders["n"] += 1
            return SimpleNamespace(rgb=_frame(renders["n"]))

        def step(self, n_steps: int = 1) -> None:
            pass

    world = World()
    recorder = VideoRecorder(tmp_path / "v.mp4")
    untap = tap_world(world, recorder)
    world.observe("head")
    world.observe("front")  # another camera: not recorded
    for _ in range(3 * STEPS_PER_FRAME):
        world.step(1)
    untap()
    world.step(STEPS_PER_FRAME)  # untapped: no render
    assert recorder.frames == 1 + 3 and renders["n"] == 2 + 3
    assert recorder.close() is not None and count_frames(tmp_path / "v.mp4") == 4


@pytest.mark.parametrize(("policy", "kept"), [("all", ["perceptor", "reflector"]), ("keyframes", ["reflector"]),
                                              ("none", [])])
def test_trace_images_policy(tmp_path: Path, policy: str, kept: list[str]) -> None:
    with TraceWriter(tmp_path, images=policy) as w:
        mask = w.save_image("m", np.zeros((4, 4), np.uint8), node="perceptor", role="mask")
        w.save_image("rgb", np.zeros((4, 4, 3), np.uint8), node="perceptor", masks=[{"path": mask, "label": "x"}])
        w.save_image("after", np.ones((4, 4, 3), np.uint8), node="reflector")
    images = [e for e in read_events(tmp_path) if e["kind"] == "artifact" and e["meta"].get("role") != "mask"]
    assert [e["node"] for e in images] == kept
    assert len(list((tmp_path / "artifacts").glob("*.png"))) == {"all": 3, "keyframes": 1, "none": 0}[policy]
    with pytest.raises(ValueError, match="trace images"):
        TraceWriter(tmp_path / "x", images="some")


def test_trace_state_none_leaves_node_inputs_out(tmp_path: Path) -> None:
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    from mallvi.tracing.capture import TraceCallbackHandler

    class State(TypedDict):
        big: str

    g = StateGraph(State)
    g.add_node("thinker", lambda s: {"big": s["big"] + "!"})
    g.add_edge(START, "thinker")
    g.add_edge("thinker", END)
    for state, folder in (("full", "full"), ("none", "none")):
        with TraceWriter(tmp_path / folder, state=state) as w:
            g.compile().invoke({"big": "x" * 5000}, config={"callbacks": [TraceCallbackHandler(w)]})
    full = [e for e in read_events(tmp_path / "full") if e["kind"] == "node_start"]
    slim = [e for e in read_events(tmp_path / "none") if e["kind"] == "node_start"]
    assert full[0]["inputs"]["big"].startswith("xxx") and slim[0]["inputs"] is None
    assert len(json.dumps(slim)) < len(json.dumps(full)) / 2
