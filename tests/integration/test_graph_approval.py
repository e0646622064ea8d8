"""Human approval before the Actor (LangGraph interrupt) and resuming a paused run from the SQLite checkpoint."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mallvi.graph.checkpoint import sqlite_saver
from mallvi.graph.drive import drive

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.fixtures.graph_fakes import FakeWorld, fake_context

INSTRUCTION = "stack the green block on the red block"


def _world() -> FakeWorld:
    return FakeWorld.blocks(("red", -0.2, 0.0), ("green", -0.05, 0.05))


def test_approve_runs_the_plan_that_was_shown() -> None:
    world = _world()
    shown: list[dict[str, Any]] = []
    out, _ = drive(fake_context(world, approve=True), INSTRUCTION, decide=lambda p: shown.append(p) or "approve")
    assert out.status == "succeeded"
    assert len(shown) == 1 and shown[0]["subtask"] == INSTRUCTION
    assert [c["skill"] for c in shown[0]["calls"]] == [c[0] for c in world.calls]


def test_abort_stops_before_anything_moves() -> None:
    world = _world()
    out, _ = drive(fake_context(world, approve=True), INSTRUCTION, decide=lambda p: "abort")
    assert out.status == "aborted" and not out.graph_success
    assert world.calls == []


def test_edit_executes_the_edited_plan() -> None:
    world = _world()

    def edit(payload: dict[str, Any]) -> Any:
        calls = [c for c in payload["calls"] if c["skill"] != "back_to_origin"]
        return {"action": "edit", "plan": {"calls": calls, "rationale": "no homing"}}

    out, _ = drive(fake_context(world, approve=True), INSTRUCTION, decide=edit)
    assert out.status == "succeeded"
    assert "back_to_origin" not in [c[0] for c in world.calls] and world.calls


def test_a_paused_run_resumes_from_the_sqlite_checkpoint(tmp_path: Path) -> None:
    world = _world()
    db = tmp_path / "checkpoints.sqlite"
    out, _ = drive(fake_context(world, approve=True), INSTRUCTION, checkpointer=sqlite_saver(db),
                   decide=lambda p: None)
    assert out.status == "paused" and out.thread_id and world.calls == []
    # a new process would build a new saver on the same file; the thread continues where it stopped
    out2, state = drive(fake_context(world, approve=True), "", checkpointer=sqlite_saver(db),
                        thread_id=out.thread_id, resume=True, decide=lambda p: "approve")
    assert out2.status == "succeeded" and state["instruction"] == INSTRUCTION
    assert out2.node_sequence.count("decomposer") == 1  # nothing was redone
    assert abs(world.objects["green_block"].pos[0] - world.objects["red_block"].pos[0]) < 0.01


def test_dry_run_stops_before_the_first_motion_with_the_plan_ready() -> None:
    world = _world()
    out, state = drive(fake_context(world), INSTRUCTION, interrupt_before_actor=True)
    assert out.status == "paused" and world.calls == []
    plan = state["action_plan"]
    assert plan is not None and [c.skill for c in plan.calls][:2] == ["grasp_actor", "place_actor"]
