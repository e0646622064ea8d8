"""The trace viewer in a real headless Chromium: run list, timeline click, step details, benchmark page, live mode."""

from __future__ import annotations

import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Browser, Page, expect, sync_playwright
from werkzeug.serving import make_server

from mallvi.logviz.app import create_app
from mallvi.tracing.trace import TraceWriter

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)  # plotly.js loads lazily; a busy 2-core machine can take a while

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
SHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"


class _Server:
    def __init__(self, root: Path, poll_ms: int = 300):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self._srv = make_server("127.0.0.1", self.port, create_app(root, poll_ms=poll_ms).server, threaded=True)
        self._thread = threading.Thread(target=self._srv.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self._srv.shutdown()
        self._thread.join(timeout=5)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    srv = _Server(FIXTURES)
    yield srv
    srv.stop()


@pytest.fixture()
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    external: list[str] = []
    pg.on("request", lambda r: external.append(r.url) if not r.url.startswith(("http://127.0.0.1", "data:")) else None)
    yield pg
    context.close()
    assert external == [], f"the viewer fetched from outside: {external}"


def _shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=True)


def _click_bar(page: Page, label: str) -> None:
    """Click the middle of the timeline bar whose text is ``label`` (as a user would)."""
    text = page.locator(".js-plotly-plot .barlayer .bartext", has_text=label).first
    expect(text).to_be_visible()
    box: Any = text.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def test_run_list_timeline_step_and_benchmark_pages(page: Page, server: _Server) -> None:
    page.goto(server.url + "/")
    rows = page.locator("#run-table tbody tr")
    expect(rows).to_have_count(7)  # two recorded runs, three synthetic and two real bench episodes
    expect(page.locator("#run-table")).to_contain_text("put the red cube on the green cube")
    expect(page.locator("#run-table")).to_contain_text("failure")
    _shot(page, "runs.png")

    page.locator("#run-table a.run-link", has_text="run_stack").click()
    expect(page.locator("#run-facts")).to_contain_text("success")
    expect(page.locator(".js-plotly-plot .barlayer .bartext", has_text="grounder #2")).to_have_count(1)
    # the Reflector's routing decisions are drawn between the bars
    expect(page.locator(".js-plotly-plot .annotation-text", has_text="retry grounder")).to_have_count(1)
    expect(page.locator(".js-plotly-plot .annotation-text", has_text="retry actor")).to_have_count(1)
    _shot(page, "run_timeline.png")

    _click_bar(page, "reflector #1")
    expect(page.locator("#step-title")).to_have_text("reflector #1")
    expect(page.locator("#step-verdict")).to_contain_text("blamed: grounder")
    image = page.locator("#step-image-0")
    expect(image).to_be_visible()
    assert page.evaluate("document.getElementById('step-image-0').naturalWidth") == 320
    expect(page.locator(".overlay-list").first).to_contain_text("box: blue cube 0.90")
    expect(page.locator(".llm-prompt").first).to_contain_text("Judge whether the subtask succeeded")
    expect(page.locator(".llm-call h4").first).to_contain_text("qwen2.5-vl-7b")
    _shot(page, "run_step_reflector.png")

    _click_bar(page, "perceptor #1")
    expect(page.locator("#step-title")).to_have_text("perceptor #1")
    expect(page.locator(".overlay-list").first).to_contain_text("mask: red cube")
    expect(page.locator("#scene-graph .js-plotly-plot")).to_be_visible()
    _shot(page, "run_step_perceptor.png")

    page.locator("#nav a", has_text="Benchmark: bench_planning").click()
    table = page.locator("#bench-table")
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table).to_contain_text("stack_blocks_three")
    expect(table.locator("thead")).to_contain_text("paper: GPT-5")
    ours = table.locator("tr", has_text="stack_blocks_three").locator("td.ours")
    expect(ours).to_have_text("50.0")
    expect(page.locator("#episode-table tbody tr")).to_have_count(3)
    _shot(page, "bench.png")


def test_filters_narrow_the_run_list(page: Page, server: _Server) -> None:
    page.goto(server.url + "/")
    expect(page.locator("#run-table tbody tr")).to_have_count(7)
    page.locator("#filter-outcome").click()
    page.keyboard.type("failure")
    option = page.get_by_role("option", name="failure")
    expect(option).to_be_visible()  # the list has caught up with the typing (slow on a loaded machine)
    option.click()
    expect(page.locator("#run-table tbody tr")).to_have_count(1)
    expect(page.locator("#run-table")).to_contain_text("stack_blocks_three")


def test_a_growing_run_updates_live(page: Page, tmp_path: Path) -> None:
    run_dir = tmp_path / "live_run"
    writer = TraceWriter(run_dir)
    writer.emit("run_start", instruction="stack blocks", task="stack_blocks_two", seed=3, config={})
    writer.emit("node_start", node="perceptor", attempt=1, subtask_index=0, inputs={})
    srv = _Server(tmp_path, poll_ms=250)
    try:
        page.goto(srv.url + "/run?path=live_run")
        expect(page.locator("#run-header")).to_contain_text("live")
        expect(page.locator(".js-plotly-plot .barlayer .bartext")).to_have_count(1)
        writer.emit("node_end", node="perceptor", attempt=1, subtask_index=0, duration_s=0.2, outcome="ok", outputs={})
        writer.emit("node_start", node="grounder", attempt=1, subtask_index=0, inputs={})
        expect(page.locator(".js-plotly-plot .barlayer .bartext", has_text="grounder #1")).to_have_count(1)
        _click_bar(page, "grounder #1")
        expect(page.locator(".step .facts")).to_contain_text("still running")
        writer.emit(
            "node_end",
            node="grounder",
            attempt=1,
            subtask_index=0,
            duration_s=0.1,
            outcome="error",
            error="no detection of 'red cube'",
        )
        writer.emit("run_end", status="failed", success=False, graph_success=False, wall_s=1.0, failure_report=None)
        expect(page.locator("#run-facts")).to_contain_text("failure")
        # the open step caught up with its end without another click
        expect(page.locator(".step .facts")).to_contain_text("error")
        expect(page.locator("#step-outputs")).to_contain_text("no detection of 'red cube'")
        expect(page.locator("#run-header")).not_to_contain_text("live")
        _shot(page, "live_run.png")
    finally:
        writer.close()
        srv.stop()
        shutil.rmtree(run_dir, ignore_errors=True)


def test_a_real_controller_run_shows_its_steps(page: Page, server: _Server) -> None:
    page.goto(server.url + "/run?path=real_stack_blocks_two")
    expect(page.locator("#run-facts")).to_contain_text("stack the green block on the red block")
    expect(page.locator(".js-plotly-plot .barlayer .bartext", has_text="actor #1")).to_have_count(1)
    _click_bar(page, "actor #1")
    expect(page.locator("#step-title")).to_have_text("actor #1")
    expect(page.locator(".events")).to_contain_text("Actor command")
    page.locator("#step-select").click()
    page.keyboard.type("grounder #1")
    option = page.get_by_role("option", name="grounder #1")  # "4: grounder #1 (subtask 0, ok)"
    expect(option).to_be_visible()  # the list has caught up with the typing (slow on a loaded machine)
    option.click()
    expect(page.locator("#step-title")).to_have_text("grounder #1")
    expect(page.locator("#step-image-0")).to_be_visible()
    expect(page.locator(".overlay-list").first).to_contain_text("box: red block")
    # the Descriptor's scene memory in the state is drawn as a graph
    expect(page.locator("#scene-graph .js-plotly-plot")).to_contain_text("red_block")
    _shot(page, "real_run_grounder.png")


def test_a_real_bench_folder_and_an_episode_without_graph_nodes(page: Page, server: _Server) -> None:
    page.goto(server.url + "/")
    page.locator("#nav a", has_text="Benchmark: bench_real_expert").click()
    table = page.locator("#bench-table")
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table.locator("tfoot")).to_contain_text("tier average")
    expect(table.locator("tfoot")).to_contain_text("67.0")  # GPT-5's Tier 2 total average in the paper
    _shot(page, "bench_real.png")
    page.locator("#episode-table tr", has_text="stack_blocks_three").locator("a").click()
    expect(page.locator("#run-facts")).to_contain_text("stack_blocks_three")
    events = page.locator("#run-events")
    expect(events).to_contain_text("Actor command")
    expect(page.locator("#run-image-0")).to_be_visible()
    expect(page.locator(".js-plotly-plot .scatterlayer .point").first).to_be_visible()  # the run-events lane
    _shot(page, "bench_real_episode.png")
