"""The viewer in headless Chromium on damaged and oversized traces: every page still renders, nothing huge is sent."""

from __future__ import annotations

import json
import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Browser, Page, expect, sync_playwright

from mallvi.logviz.fulltext import MAX_SHOWN_CHARS
from tests.e2e.test_logviz_browser import ARGS, CHROMIUM, FIXTURES, _click_bar, _Server, _shot
from tests.unit.test_logviz_hardening import write_damaged_run

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)

RESPONSE_CHARS = 5_000_000  # a model that answered with megabytes


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture()
def tab(chromium: Browser) -> Iterator[Page]:
    context = chromium.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    yield context.new_page()
    context.close()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("viewer_root")
    shutil.copytree(FIXTURES / "run_stack", base / "run_stack")
    write_damaged_run(base / "damaged")
    huge = base / "huge"
    huge.mkdir()
    events = [
        {"v": 1, "seq": 0, "t": 10.0, "run_id": "huge", "kind": "run_start", "instruction": "stack", "task": "big",
         "seed": 0},
        {"v": 1, "seq": 1, "t": 11.0, "run_id": "huge", "kind": "node_start", "node": "thinker", "attempt": 1,
         "span": "s1", "inputs": {"note": "y" * (2 * MAX_SHOWN_CHARS)}},
        {"v": 1, "seq": 2, "t": 12.0, "run_id": "huge", "kind": "llm_call", "node": "thinker", "span": "s1",
         "model": "m", "prompt": [{"role": "human", "content": "plan"}],
         "response": "START" + "z" * RESPONSE_CHARS + "END"},
        {"v": 1, "seq": 3, "t": 13.0, "run_id": "huge", "kind": "node_end", "node": "thinker", "attempt": 1,
         "span": "s1", "outcome": "ok", "outputs": {}},
    ]
    (huge / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return base


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[_Server]:
    srv = _Server(root)
    yield srv
    srv.stop()


def test_a_damaged_trace_leaves_the_run_list_and_its_own_page_working(tab: Page, server: _Server) -> None:
    failed: list[str] = []
    tab.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 500 else None)
    tab.goto(server.url + "/")
    rows = tab.locator("#run-table tbody tr")
    expect(rows).to_have_count(3)
    expect(tab.locator("#run-table")).to_contain_text("put the red cube on the green cube")
    expect(tab.locator("#run-table")).to_contain_text("damaged_task")
    tab.locator("#run-table a.run-link", has_text="damaged").click()
    expect(tab.locator("#run-facts")).to_contain_text("failure")
    tab.locator("#step-select").click()
    tab.keyboard.type("decomposer #1")
    option = tab.get_by_role("option", name="decomposer #1")
    expect(option).to_be_visible()  # the list has caught up with the typing (slow on a loaded machine)
    option.click()
    expect(tab.locator("#step-title")).to_have_text("decomposer #1")
    expect(tab.locator(".llm-call")).to_have_count(2)
    _shot(tab, "damaged_run.png")
    assert failed == []


def test_a_huge_model_response_is_cut_and_offered_whole_as_a_download(tab: Page, server: _Server) -> None:
    sizes: list[int] = []
    tab.on("response", lambda r: sizes.append(len(r.body())) if "_dash-update-component" in r.url else None)
    tab.goto(server.url + "/run?path=huge")
    _click_bar(tab, "thinker #1")
    response = tab.locator(".llm-response").first
    expect(response).to_contain_text("START")
    shown = response.inner_text()
    assert len(shown) == MAX_SHOWN_CHARS and "END" not in shown
    assert len(tab.locator("#step-inputs").inner_text()) == MAX_SHOWN_CHARS
    assert max(sizes) < 10 * MAX_SHOWN_CHARS  # the browser never received the megabytes
    link = tab.locator(".llm-call a.download-full")
    expect(link).to_contain_text(f"{RESPONSE_CHARS + 8:,} characters")
    _shot(tab, "huge_response.png")
    with tab.expect_download() as info:
        link.click()
    saved = Path(info.value.path())
    text = saved.read_text()
    assert text.startswith("START") and text.endswith("END") and len(text) == RESPONSE_CHARS + 8
    assert info.value.suggested_filename == "huge-step0-call1-response.txt"
    with pytest.raises(urllib.error.HTTPError) as missing:  # a link to nothing is a 404, not a crash
        urllib.request.urlopen(server.url + "/download?path=huge&exec=9&part=response&call=0", timeout=30)
    assert missing.value.code == 404
