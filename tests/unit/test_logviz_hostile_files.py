"""Viewer robustness against hostile bench and trace files: FIFOs, invalid UTF-8, deep nesting, huge numbers, bad
paths. Nothing hangs, nothing answers 500 with a traceback, one bad line costs only itself (with a visible note)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from mallvi.logviz.app import create_app
from mallvi.logviz.components.bench import bench_page
from mallvi.logviz.reader import load_run
from mallvi.logviz.run_index import RunCatalog
from mallvi.tracing.jsonl import read_json_tolerant, read_jsonl_tolerant

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
DEEP = "[" * 10_000 + "]" * 10_000
HUGE_INT = "9" * 5000


def _in_thread(fn: Any, timeout_s: float = 10.0) -> Any:
    """Run ``fn`` in a thread; fail the test (instead of hanging) when it does not return in time."""
    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.update(value=fn()), daemon=True)
    thread.start()
    thread.join(timeout_s)
    assert not thread.is_alive(), f"{fn} still blocked after {timeout_s} s"
    return box["value"]


def _text(component: Any) -> str:
    return json.dumps(component.to_plotly_json(), default=lambda c: c.to_plotly_json())


def _bench_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "bench"
    shutil.copytree(FIXTURES / "bench_planning", folder)
    return folder


def test_a_fifo_named_like_a_bench_file_is_refused_without_blocking(tmp_path: Path) -> None:
    folder = _bench_folder(tmp_path)
    for name in ("results.json", "table.md"):
        (folder / name).unlink()
        os.mkfifo(folder / name)  # nobody ever writes into it: opening it for reading would block forever
    page = _in_thread(lambda: bench_page(folder, "bench", set()))
    text = _text(page)
    assert "results.json could not be read" in text and "not a regular file" in text
    assert "stack_blocks_three" in text  # the episodes still show
    (folder / "episodes.jsonl").unlink()
    os.mkfifo(folder / "episodes.jsonl")
    records, problems = _in_thread(lambda: read_jsonl_tolerant(folder / "episodes.jsonl"))
    assert records == [] and "not a regular file" in str(problems[0])


def test_bad_lines_in_episodes_jsonl_are_skipped_with_a_note(tmp_path: Path) -> None:
    folder = _bench_folder(tmp_path)
    good = (folder / "episodes.jsonl").read_bytes().splitlines(keepends=True)
    bad = [b'{"task": "x", "seed": 1, "note": "\xff\xfe"}\n', DEEP.encode() + b"\n",
           b'{"task": "y", "seed": ' + HUGE_INT.encode() + b"}\n", b"[1, 2]\n"]
    (folder / "episodes.jsonl").write_bytes(good[0] + b"".join(bad) + b"".join(good[1:]))
    records, problems = read_jsonl_tolerant(folder / "episodes.jsonl")
    assert len(records) == len(good)
    assert [p.line for p in problems] == [2, 3, 4, 5]
    reasons = " | ".join(p.reason for p in problems)
    assert "not valid UTF-8" in reasons and "nested deeper" in reasons and "4300 digits" in reasons
    assert "not an object" in reasons
    text = _text(bench_page(folder, "bench", set()))
    assert "4 line(s) of episodes.jsonl could not be read" in text and "line 3: nested deeper" in text
    assert "Episodes (3)" in text and "blocks_ranking_rgb" in text  # the good episodes are all listed


@pytest.mark.parametrize("content", [b'{"tasks": {"a": "\xff"}}', DEEP.encode(), b'{"n": ' + HUGE_INT.encode() + b"}"])
def test_a_damaged_results_json_is_named_not_a_500(tmp_path: Path, content: bytes) -> None:
    folder = _bench_folder(tmp_path)
    (folder / "results.json").write_bytes(content)
    value, problem = read_json_tolerant(folder / "results.json")
    assert value is None and problem is not None
    text = _text(bench_page(folder, "bench", set()))
    assert "results.json could not be read" in text


def test_one_bad_line_in_events_jsonl_costs_only_that_line(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(FIXTURES / "run_stack", run_dir)
    lines = (run_dir / "events.jsonl").read_text().splitlines(keepends=True)
    before = load_run(run_dir)
    damaged = [*lines[:5], DEEP + "\n", '{"kind": "error", "n": ' + HUGE_INT + "}\n", *lines[5:]]
    (run_dir / "events.jsonl").write_text("".join(damaged))
    run = load_run(run_dir)
    assert run.outcome == before.outcome == "success"
    assert len(run.node_execs) == len(before.node_execs) == 23
    assert [p.line for p in run.problems] == [6, 7]
    assert "nested deeper" in run.problems[0].reason and "4300 digits" in run.problems[1].reason
    catalog = RunCatalog(tmp_path)
    assert catalog.run("run") is not None and catalog.run("run").outcome == "success"  # type: ignore[union-attr]


def test_the_run_page_names_the_skipped_lines(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(FIXTURES / "run_stack", run_dir)
    with open(run_dir / "events.jsonl", "a") as fh:
        fh.write(DEEP + "\n")
    from mallvi.logviz.app import _run_header

    text = _text(_run_header(load_run(run_dir)))
    n_lines = len((run_dir / "events.jsonl").read_text().splitlines())
    assert "1 line(s) of events.jsonl could not be read" in text and f"line {n_lines}: nested deeper" in text


@pytest.mark.parametrize("path", ["/_dash-component-suites/../..", "/_dash-component-suites/%2e%2e/%2e%2e",
                                  "/_dash-component-suites/dash/no-such.js", "/_dash-component-suites/..",
                                  "/download/../../etc/passwd"])
def test_bad_script_paths_are_404_without_a_traceback(path: str, caplog: pytest.LogCaptureFixture) -> None:
    client = create_app(FIXTURES).server.test_client()
    with caplog.at_level(logging.DEBUG):
        response = client.get(path)
    assert response.status_code == 404
    assert b"Traceback" not in response.data
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
