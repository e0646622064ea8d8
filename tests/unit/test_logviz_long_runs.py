"""The viewer on long and unusual runs: retries grouped by subtask attempt, every bar wide enough to click, the
failure report in words, the judged outcome beside the graph's status, dry-run and paused runs in their own states,
the bulk of a trace left on disk, a recorded video served in ranges."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from mallvi.logviz.app import _run_header, create_app
from mallvi.logviz.components.runlist import filter_runs
from mallvi.logviz.components.timeline import (
    BY_ATTEMPT,
    BY_NODE,
    MIN_BAR_SHARE,
    ROWS_PER_PAGE,
    attempt_pages,
    default_layout,
    timeline_figure,
)
from mallvi.logviz.reader import TraceReader, load_run
from mallvi.logviz.run_index import RunCatalog
from mallvi.logviz.run_text import failure_report_text
from mallvi.tracing.trace import TraceWriter
from mallvi.tracing.video import record_world_video

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "traces"


def _long_run(tmp_path: Path, size_mb: float = 1.0) -> Path:
    out = tmp_path / "long"
    subprocess.run([sys.executable, str(ROOT / "scripts/make_trace_fixture.py"), "--long-run", str(out),
                    "--size-mb", str(size_mb)], check=True, capture_output=True, timeout=300)
    return out


def _text(component: object) -> str:
    return json.dumps(component, default=lambda c: c.to_plotly_json())


def test_a_retry_heavy_run_opens_grouped_by_subtask_attempt_with_clickable_bars(tmp_path: Path) -> None:
    run = load_run(_long_run(tmp_path, 1.0))
    assert default_layout(run) == BY_ATTEMPT and default_layout(load_run(FIXTURES / "run_stack")) == BY_NODE
    fig = timeline_figure(run)
    rows = list(fig.layout.yaxis.ticktext)
    assert rows[0] == "subtask 0 · attempt 1 · execution → actor"
    assert len(rows) == len({(ex.subtask_index, ex.attempt) for ex in run.node_execs}) <= ROWS_PER_PAGE
    bars = [t for t in fig.data if t.type == "bar"]
    widths = [w for t in bars for w in t.x]
    assert len(widths) == len(run.node_execs)
    # the Reflector takes 2 ms of a 7 s attempt: drawn at least 1 % of the axis wide (~10 px), so it can be clicked
    assert min(widths) >= 0.01 * max(b + w for t in bars for b, w in zip(t.base, t.x, strict=True))
    reflector = next(ex for ex in run.node_execs if ex.node == "reflector")
    assert reflector.duration_s is not None and reflector.duration_s < 0.01
    # no two bars of one row overlap (a widened short bar pushes the next one along)
    for row in set(y for t in bars for y in t.y):
        spans = sorted((b, b + w) for t in bars for y, b, w in zip(t.y, t.base, t.x, strict=True) if y == row)
        assert all(a[1] <= b[0] + 1e-9 for a, b in itertools.pairwise(spans))
    # by node, the same run's short bars are widened too
    node_fig = timeline_figure(run, BY_NODE)
    span = max(b + w for t in node_fig.data if t.type == "bar" for b, w in zip(t.base, t.x, strict=True))
    assert min(w for t in node_fig.data if t.type == "bar" for w in t.x) >= MIN_BAR_SHARE[BY_NODE] * span * 0.9


def test_a_long_run_is_paged_and_its_bulk_stays_on_disk(tmp_path: Path) -> None:
    trace = _long_run(tmp_path, 10.0)
    reader = TraceReader(trace)
    reader.refresh()
    run = reader.summary()
    pages = attempt_pages(run)
    n_rows = len({(ex.subtask_index, ex.attempt) for ex in run.node_execs})
    assert n_rows > ROWS_PER_PAGE and len(pages) == -(-n_rows // ROWS_PER_PAGE)
    assert pages[0] == {"label": f"attempt rows 1–{ROWS_PER_PAGE} of {n_rows}", "value": 0}
    assert len(timeline_figure(run).layout.yaxis.ticktext) == n_rows - pages[-1]["value"]  # opens on the last page
    first = timeline_figure(run, BY_ATTEMPT, first_row=0)
    assert len(first.layout.yaxis.ticktext) == ROWS_PER_PAGE
    # the index holds no node state, no prompts: a small share of the file
    held = sum(len(json.dumps(e, default=str)) for e in reader.events)
    assert held < (trace / "events.jsonl").stat().st_size / 5
    ex = run.node_execs[-1]
    assert "inputs" not in ex.start_event and ex.inputs["subtask_index"] == ex.subtask_index  # read back on demand


def test_the_failure_report_reads_as_text() -> None:
    report = {"subtask_index": 1, "subtask": "place the green block on the red block", "reason": "budget spent",
              "attempts": 3, "tried": ["top-down grasp", "side grasp"],
              "history": [{"verdict": "failure", "failure_category": "execution", "blamed_agent": "actor",
                           "explanation": "the block slipped", "failed_step": None}] * 3}
    text = failure_report_text(report)
    assert text.splitlines()[0] == ("The run failed at subtask 1 (place the green block on the red block) after 3 "
                                    "attempts: budget spent")
    assert "  - side grasp" in text and "  3. failure · execution · blamed actor: the block slipped" in text
    assert "{" not in text  # not a Python or JSON dict
    assert failure_report_text("the model ignores images") == "the model ignores images"


def _ended(tmp_path: Path, name: str, status: str, success: bool) -> Path:
    with TraceWriter(tmp_path / name) as w:
        w.emit("run_start", instruction="go", task=name, seed=0, config={})
        w.emit("run_end", status=status, success=success, graph_success=status == "succeeded", wall_s=1.0,
               failure_report=None)
    return tmp_path / name


def test_outcome_and_graph_status_are_shown_apart_and_dry_runs_and_pauses_are_not_failures(tmp_path: Path) -> None:
    no_reflector = load_run(_ended(tmp_path, "noref", "succeeded", False))
    assert no_reflector.outcome == "failure" and no_reflector.graph_status == "succeeded"
    header = _text(_run_header(no_reflector))
    assert "failure (judged from the scene)" in header
    assert "succeeded (the graph believed the task done; the scene says it is not)" in header
    assert "failure (succeeded)" not in header
    assert load_run(_ended(tmp_path, "dry", "planned", False)).outcome == "planned"
    assert load_run(_ended(tmp_path, "paused", "paused", False)).outcome == "paused"
    runs = RunCatalog(tmp_path).runs()
    assert [k for k, _ in filter_runs(runs, None, ["failure"])] == ["noref"]
    assert "planned: a dry run" in _text(_run_header(load_run(tmp_path / "dry")))


def test_a_recorded_video_is_named_in_the_run_and_served_in_ranges(tmp_path: Path) -> None:
    class World:
        n = 0

        def observe(self, camera: str = "head") -> object:
            World.n += 1
            img = np.zeros((36, 48, 3), np.uint8)
            img[World.n % 36] = 200
            return type("Obs", (), {"rgb": img})()

        def step(self, n_steps: int = 1) -> None:
            pass

    world = World()
    with TraceWriter(tmp_path / "run") as w:
        w.emit("run_start", instruction="go", task="t", seed=0, config={})
        with record_world_video(world, tmp_path / "run", w):
            for _ in range(8):
                world.observe("head")
        w.emit("run_end", status="succeeded", success=True, graph_success=True, wall_s=1.0, failure_report=None)
    run = load_run(tmp_path / "run")
    assert len(run.videos) == 1 and run.videos[0]["frames"] == 8
    client = create_app(tmp_path).server.test_client()
    whole = client.get("/video?path=run&n=0")
    size = (tmp_path / "run" / "video" / "head.mp4").stat().st_size
    assert whole.status_code == 200 and len(whole.data) == size and whole.mimetype == "video/mp4"
    part = client.get("/video?path=run&n=0", headers={"Range": "bytes=10-19"})
    assert part.status_code == 206 and part.data == whole.data[10:20]
    assert part.headers["Content-Range"] == f"bytes 10-19/{size}"
    assert client.get("/video?path=run&n=1").status_code == 404
