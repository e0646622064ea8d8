"""Recovery that changes strategy, in SAPIEN: a grasp that fails the same way every time is not repeated; the
next attempt differs (the other arm, then relays and nudges), and when nothing different is left the run ends
before its budget with a failure report that says so, in `mallvi run`'s result and trace and in the bench's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.episode import run_episode, trace_dir
from mallvi.config import Budgets, RunConfig
from mallvi.orchestration.run_instruction import run
from mallvi.orchestration.stations import RunRequest
from mallvi.sim_bridge.world import SimWorld
from mallvi.tracing.trace import read_events

SEED = 3
BAND_M = 0.08  # no end-effector target may come this close (in x) to the green block


@pytest.fixture
def green_fenced_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every world built gets a safety workspace that leaves out a band around the green block's x: every grasp
    of it, every push beside it is refused by the guard, whichever arm and strategy (a situation that stays the
    same from one attempt to the next)."""
    create = SimWorld.create.__func__  # type: ignore[attr-defined]

    def fenced(cls: type[SimWorld], *args: Any, **kw: Any) -> SimWorld:
        w = create(cls, *args, **kw)
        gx = float(w.objects["green_block"].pose.p[0])
        lo, hi = w.guard.config.workspace_m["left"]
        left = ((lo[0], lo[1], lo[2]), (gx - BAND_M, hi[1], hi[2])) if gx - BAND_M > lo[0] else \
            ((gx + BAND_M, lo[1], lo[2]), (hi[0], hi[1], hi[2]))
        lo, hi = w.guard.config.workspace_m["right"]
        right = ((gx + BAND_M, lo[1], lo[2]), (hi[0], hi[1], hi[2])) if gx + BAND_M < hi[0] else \
            ((lo[0], lo[1], lo[2]), (gx - BAND_M, hi[1], hi[2]))
        w.guard.reconfigure(workspace_m={"left": left, "right": right})
        return w

    monkeypatch.setattr(SimWorld, "create", classmethod(fenced))


def test_a_failure_that_recurs_is_not_repeated_and_the_run_ends_early_saying_so(
        green_fenced_off: None, tmp_path: Path) -> None:
    budgets = Budgets(max_attempts_per_subtask=15, max_total_attempts=45)
    cfg = RunConfig(perception="color", budgets=budgets)
    r = run(RunRequest(instruction="stack the green block on the red block", task="stack_blocks_two", seed=SEED,
                       trace_dir=tmp_path), cfg)
    assert r.status == "failed" and r.failure_report is not None
    report = r.failure_report
    assert report["reason"].startswith("no different strategy remains"), report["reason"]
    assert r.attempts["0"] < budgets.max_attempts_per_subtask  # stopped early, not at the budget
    tried = report["tried"]
    # the second attempt differs from the first (today the same grasp was tried again until the budget ran out)
    assert tried[0].split(" at ")[0] != tried[1].split(" at ")[0], tried
    assert any(t.startswith("nudge ") for t in tried), tried
    # different strategies before any is tried again: an arm whose grasp was unreachable is ruled out (so is a relay
    # it would give from), the other arm relays, and both arms nudge
    names = [t.split(" at ")[0] for t in tried[:4]]
    assert len(set(names)) == 4 and {"nudge left", "nudge right"} <= set(names), tried
    assert any(n.startswith("relay ") for n in names), tried
    end = [e for e in read_events(tmp_path) if e["kind"] == "run_end"]
    assert end and end[-1]["failure_report"] == report


def test_the_bench_run_end_carries_the_failure_report(green_fenced_off: None, tmp_path: Path) -> None:
    cfg = BenchConfig(tier="planning", tasks=("stack_blocks_two",), episodes=1, save_images=False)
    record = run_episode(cfg, "stack_blocks_two", SEED, tmp_path)
    assert record["success"] is False and record["failure_report"] is not None
    assert record["failure_report"]["reason"]
    end = [e for e in read_events(trace_dir(tmp_path, "stack_blocks_two", SEED)) if e["kind"] == "run_end"]
    assert end and end[-1]["failure_report"] == record["failure_report"]
