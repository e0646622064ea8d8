"""A subtask's calls are checked whole before the first one moves: place_actor's descent and accumulated
displacements included; the refusal names the call and nothing moves."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

from mallvi.graph.nodes.actor import actor
from mallvi.graph.schemas import ActionPlan, SceneObject, SkillCall

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.fixtures
from tests.fixtures.graph_fakes import TABLE_Z, FakeWorld, fake_context

WORKSPACE = ((-0.6, -0.35, TABLE_Z - 0.005), (0.6, 0.35, TABLE_Z + 0.6))


def _run(calls: list[SkillCall]) -> tuple[FakeWorld, dict[str, object], list[dict[str, object]]]:
    w = FakeWorld.blocks(("red", 0.1, 0.0), ("green", 0.2, -0.05))
    events: list[dict[str, object]] = []
    ctx = fake_context(w, workspace_m=WORKSPACE)
    ctx.trace = SimpleNamespace(emit=lambda kind, **kw: events.append({"kind": kind, **kw}))  # type: ignore[assignment]
    localized = {n: SceneObject(id=n, label="block", color=o.color, position_m=list(o.pos), size_m=[o.size] * 3)
                 for n, o in w.objects.items()}
    state = {"action_plan": ActionPlan(calls=calls), "localized": localized, "attempts": {}, "subtask_index": 0}
    out = actor(state, SimpleNamespace(context=ctx))  # type: ignore[arg-type]
    return w, out, events


def test_a_place_whose_descent_goes_below_the_table_moves_nothing() -> None:
    target = [0.1, 0.0, TABLE_Z + 0.04, 1.0, 0.0, 0.0, 0.0]
    w, out, events = _run([
        SkillCall(skill="grasp_actor", arm="right", object="green_block"),
        SkillCall(skill="place_actor", arm="right", object="green_block", target_pose=target,
                  args={"pre_dis": 0.08, "dis": -0.5}),
    ])
    report = out["actor_report"]
    assert not report.ok and report.failed_step is not None and report.failed_step.kind == "refused_by_guard"
    assert "call 2 (place_actor, right arm)" in report.message and "descent point" in report.message
    assert "below the table top" in report.message
    assert w.calls == []  # not even the grasp ran
    assert any(e["kind"] == "safety_refusal" and e["command"] == "place_actor" for e in events)


def test_displacements_that_add_up_past_the_workspace_move_nothing() -> None:
    step = {"x": 0.15}
    w, out, _ = _run([
        SkillCall(skill="grasp_actor", arm="right", object="green_block"),
        SkillCall(skill="move_by_displacement", arm="right", args=step),
        SkillCall(skill="move_by_displacement", arm="right", args=step),
        SkillCall(skill="move_by_displacement", arm="right", args=step),  # x: 0.2 + 3 * 0.15 = 0.65 > 0.6
    ])
    report = out["actor_report"]
    assert not report.ok and "call 4 (move_by_displacement, right arm)" in report.message
    assert "outside the workspace" in report.message
    assert w.calls == []


def test_a_plan_within_limits_runs() -> None:
    target = [0.1, 0.0, TABLE_Z + 0.04, 1.0, 0.0, 0.0, 0.0]
    w, out, _ = _run([
        SkillCall(skill="grasp_actor", arm="right", object="green_block"),
        SkillCall(skill="move_by_displacement", arm="right", args={"z": 0.05}),
        SkillCall(skill="place_actor", arm="right", object="green_block", target_pose=target,
                  args={"pre_dis": 0.08, "dis": 0.005}),
    ])
    assert out["actor_report"].ok, out["actor_report"].message
    assert [c[0] for c in w.calls] == ["grasp_actor", "move_by_displacement", "place_actor"]
