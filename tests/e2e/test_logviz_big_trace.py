"""The viewer in headless Chromium on a 50 MB trace (a long retry-heavy run): the run list and the run's page paint
within a bound and the server's memory stays bounded; a recorded video plays beside the timeline."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Browser, Page, expect

from mallvi.tracing.trace import TraceWriter
from mallvi.tracing.video import record_world_video
from tests.e2e.test_logviz_browser import _Server, _shot, browser  # noqa: F401 - the shared Chromium fixture

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
TRACE_MB = 50
#: first paint of the run list, and the run's page with its timeline, on a loaded 2-core machine (the viewer this
#: replaced stayed on "loading…" for minutes on such a trace)
LIST_BOUND_S = 15.0
RUN_PAGE_BOUND_S = 30.0
#: what the server may grow by while serving the 50 MB trace (it held several GB before the index)
RSS_GROWTH_BOUND_MB = 400


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@pytest.fixture(scope="module")
def big_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("big") / "long_run"
    subprocess.run([sys.executable, str(ROOT / "scripts/make_trace_fixture.py"), "--long-run", str(out),
                    "--size-mb", str(TRACE_MB)], check=True, capture_output=True, timeout=600)
    assert (out / "events.jsonl").stat().st_size >= TRACE_MB * 1024 * 1024
    return out


@pytest.fixture()
def tab(browser: Browser) -> Iterator[Page]:  # noqa: F811 - the fixture imported above
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context.new_page()
    context.close()


@pytest.mark.slow
def test_a_50_mb_trace_paints_within_the_bound_and_memory_stays_bounded(tab: Page, big_trace: Path) -> None:
    rss_before = _rss_mb()
    server = _Server(big_trace)
    try:
        t0 = time.perf_counter()
        tab.goto(server.url + "/")
        expect(tab.locator("#run-table a.run-link")).to_be_visible(timeout=LIST_BOUND_S * 1000)
        list_s = time.perf_counter() - t0
        expect(tab.locator("#run-table")).to_contain_text("failure")

        t0 = time.perf_counter()
        tab.locator("#run-table a.run-link").first.click()
        expect(tab.locator(".js-plotly-plot .barlayer .point").first).to_be_visible(timeout=RUN_PAGE_BOUND_S * 1000)
        run_s = time.perf_counter() - t0
        expect(tab.locator("#failure-report")).to_contain_text("The run failed at subtask")
        expect(tab.locator("#run-facts")).to_contain_text("failure (judged from the scene)")
        ticks = tab.locator(".js-plotly-plot .ytick text")
        expect(ticks.first).to_contain_text("· attempt")  # grouped by subtask attempt
        _shot(tab, "big_trace_run.png")

        # the last bar drawn is a Reflector's (2 ms long): it can be clicked, and its step opens
        bar = tab.locator(".js-plotly-plot .barlayer .point path").last
        bar.scroll_into_view_if_needed()
        box: Any = bar.bounding_box()
        assert box["width"] >= 5, "a short bar is too narrow to click"
        tab.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        expect(tab.locator("#step-title")).to_contain_text("reflector #", timeout=RUN_PAGE_BOUND_S * 1000)
        expect(tab.locator("#step-verdict")).to_contain_text("blamed:")
        expect(tab.locator("#step-inputs")).to_contain_text('"history"')  # the node's state, read back from disk
    finally:
        server.stop()
    growth = _rss_mb() - rss_before
    print(f"50 MB trace: run list {list_s:.1f} s, run page {run_s:.1f} s, server memory +{growth:.0f} MB")
    assert list_s < LIST_BOUND_S and run_s < RUN_PAGE_BOUND_S
    assert growth < RSS_GROWTH_BOUND_MB


class _MovingWorld:
    """A stand-in simulated world whose head camera shows a bar moving down the picture."""

    def __init__(self) -> None:
        self.n = 0

    def observe(self, camera: str = "head") -> Any:
        self.n += 1
        img = np.full((120, 160, 3), 40, np.uint8)
        img[(4 * self.n) % 120 : (4 * self.n) % 120 + 4] = (230, 80, 40)
        return type("Obs", (), {"rgb": img})()

    def step(self, n_steps: int = 1) -> None:
        pass


def test_the_video_plays_beside_the_timeline_and_a_bar_click_seeks_it(tab: Page, tmp_path: Path) -> None:
    world = _MovingWorld()
    with TraceWriter(tmp_path / "run") as w:
        w.emit("run_start", instruction="go", task="demo", seed=0, config={})
        with record_world_video(world, tmp_path / "run", w):
            for node in ("perceptor", "actor", "reflector"):
                w.emit("node_start", node=node, attempt=1, subtask_index=0, span=node)
                for _ in range(10):
                    world.observe("head")
                    time.sleep(0.01)
                w.emit("node_end", node=node, attempt=1, subtask_index=0, span=node, outcome="ok", duration_s=0.1)
        w.emit("run_end", status="succeeded", success=True, graph_success=True, wall_s=0.4, failure_report=None)
    server = _Server(tmp_path)
    try:
        tab.goto(server.url + "/run?path=run")
        video = tab.locator("#run-video")
        expect(video).to_be_visible()
        tab.wait_for_function("document.getElementById('run-video').readyState >= 1", timeout=20_000)
        assert tab.evaluate("document.getElementById('run-video').duration") > 0  # Chromium decoded the MP4
        assert tab.evaluate("document.getElementById('run-video').videoWidth") == 160
        text = tab.locator(".js-plotly-plot .barlayer .bartext", has_text="reflector #1").first
        box: Any = text.bounding_box()
        tab.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        expect(tab.locator("#step-title")).to_have_text("reflector #1")
        tab.wait_for_function("document.getElementById('run-video').currentTime > 0", timeout=10_000)
        _shot(tab, "run_video.png")
    finally:
        server.stop()
