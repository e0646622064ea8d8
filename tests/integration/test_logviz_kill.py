"""A trace survives its writer being killed: every event written before SIGKILL reads back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from mallvi.logviz.reader import STALE_AFTER_S, TraceReader, load_run
from mallvi.tracing.trace import read_events

_WRITER = """
import sys, time
from mallvi.tracing.trace import TraceWriter
w = TraceWriter(sys.argv[1], run_id="killme")
w.emit("run_start", instruction="stack blocks", task="stack_blocks_three", seed=7, config={})
i = 0
while True:
    w.emit("node_start", node="perceptor", attempt=1, subtask_index=i, inputs={"blob": "x" * 5000})
    w.emit("node_end", node="perceptor", attempt=1, subtask_index=i, duration_s=0.001, outcome="ok", outputs={})
    print(i, flush=True)
    i += 1
"""


def test_events_written_before_sigkill_are_all_read_back(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True, env={**os.environ}
    )
    assert proc.stdout is not None
    live = TraceReader(tmp_path)
    seen_live = 0
    confirmed = -1
    deadline = time.monotonic() + 20
    while confirmed < 200 and time.monotonic() < deadline:
        confirmed = int(proc.stdout.readline())
        live.refresh()
        seen_live = max(seen_live, len(live.events))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL

    events = read_events(tmp_path)
    # every pair the writer confirmed (printed after emitting) is on disk, in order, with no gaps
    assert len(events) >= 1 + 2 * (confirmed + 1)
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert events[0]["kind"] == "run_start"
    # the live reader saw the file grow while it was written, and catches up with the rest now
    assert seen_live > 0
    live.refresh()
    assert len(live.events) == len(events)
    run = load_run(tmp_path)
    assert run.outcome == "running" and run.task == "stack_blocks_three"
    assert len([ex for ex in run.node_execs if ex.outcome == "ok"]) >= confirmed + 1
    # once the file has been quiet for a while, the killed run shows as incomplete rather than running
    old = time.time() - STALE_AFTER_S - 10
    os.utime(tmp_path / "events.jsonl", (old, old))
    assert load_run(tmp_path).outcome == "incomplete"


def test_a_torn_last_line_is_ignored_until_it_is_completed(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"v":1,"seq":0,"t":1.0,"run_id":"r","kind":"run_start","task":"t"}\n{"v":1,"seq":1,"t":2.0,')
    reader = TraceReader(tmp_path)
    assert reader.refresh() == 1
    with open(path, "a") as fh:
        fh.write('"run_id":"r","kind":"error","where":"actor","message":"boom"}\n')
    assert reader.refresh() == 1
    assert [e["kind"] for e in reader.events] == ["run_start", "error"]
    assert reader.summary().unattached[0]["message"] == "boom"
