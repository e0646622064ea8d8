"""Failures go where their kind says, whatever words their message happens to contain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mallvi.config import Budgets
from mallvi.contracts.skills import FailureKind, SkillResult
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.rules.thinker.thinker import RulesThinker
from mallvi.graph.drive import drive
from mallvi.graph.schemas import FailedStep, ObjectRef, SceneMemory, SceneObject, Subtask
from mallvi.graph.state import GraphState
from mallvi.tracing.trace import TraceWriter
from tests.fixtures.graph_fakes import TABLE_Z, FakeWorld, fake_context

STACK = "stack the green block on the red block"
# words the old message search took for reach or planning problems ("ik" also matches inside "like")
MISLEADING = ("it looks like the arm would not like this", "the plan was refused", "ik ik ik: no reach, plan or ik")


def _world() -> FakeWorld:
    return FakeWorld.blocks(("red", -0.2, 0.0), ("green", -0.1, 0.05))


def _first_failure(world: FakeWorld, tmp_path: Path | None = None) -> tuple[list[str], GraphState]:
    trace = TraceWriter(tmp_path) if tmp_path is not None else None
    ctx = fake_context(world, budgets=Budgets(max_attempts_per_subtask=3), trace=trace)
    out, state = drive(ctx, STACK)
    if trace is not None:
        trace.close()
    return out.node_sequence, state


def _after_first_reflector(seq: list[str]) -> str:
    return seq[seq.index("reflector") + 1]


@pytest.mark.parametrize("message", MISLEADING)
def test_a_guard_refusal_goes_to_the_thinker_and_is_traced_as_a_refusal_whatever_its_words(
        message: str, tmp_path: Path) -> None:
    world = _world()
    world.fail_next["grasp_actor"] = SkillResult.failure(message, FailureKind.REFUSED_BY_GUARD)
    world.fail_times["grasp_actor"] = 2  # the grasp and its variant 1 cm short of the grasp point
    seq, _ = _first_failure(world, tmp_path)
    assert _after_first_reflector(seq) == "thinker"
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    refusals = [e for e in events if e["kind"] == "safety_refusal"]
    assert [r["reason"] for r in refusals] == [message]
    commands = [e for e in events if e["kind"] == "actor_command" and not e["ok"]]
    assert commands[0]["failure_kind"] == "refused_by_guard"


@pytest.mark.parametrize("message", MISLEADING)
def test_an_empty_grasp_goes_to_the_projector_even_when_its_message_speaks_of_plans_and_reach(message: str) -> None:
    world = _world()
    world.fail_next["grasp_actor"] = SkillResult.failure(message, FailureKind.GRASP_EMPTY)
    seq, _ = _first_failure(world)
    assert _after_first_reflector(seq) == "projector"


@pytest.mark.parametrize("message", MISLEADING)
def test_a_device_fault_is_retried_by_the_actor_even_when_its_message_speaks_of_plans(message: str) -> None:
    world = _world()
    world.fail_next["grasp_actor"] = SkillResult.failure(message, FailureKind.DEVICE_FAULT)
    seq, _ = _first_failure(world)
    assert _after_first_reflector(seq) == "actor"


def test_an_unreachable_target_goes_to_the_thinker_and_an_empty_grasp_to_the_projector_as_before() -> None:
    world = _world()
    world.fail_next["place_actor"] = SkillResult.failure(
        "cannot bring green_block above the target: cannot move the left arm to [-0.2, 0.0, 0.9]: no "
        "inverse-kinematics solution (Fail)", FailureKind.UNREACHABLE)
    world.fail_times["place_actor"] = 5  # the place and each of its four alternatives (shorter, turned)
    seq, _ = _first_failure(world)
    assert _after_first_reflector(seq) == "thinker"
    world = _world()
    world.fail_next["grasp_actor"] = SkillResult.failure(
        "grasp of green_block failed: the left gripper closed on nothing (finger gap 0.0 mm)", FailureKind.GRASP_EMPTY)
    seq, _ = _first_failure(world)
    assert _after_first_reflector(seq) == "projector"


def _block(color: str, x: float, y: float) -> SceneObject:
    return SceneObject(id=f"{color}_block", label="block", color=color, position_m=(x, y, TABLE_Z + 0.02),
                       size_m=(0.04, 0.04, 0.04))


def _think(attempt: int, feedback: str | None, failed: FailedStep | None) -> list[tuple[str, str, dict[str, object]]]:
    green, red = _block("green", 0.02, -0.05), _block("red", 0.04, -0.1)  # both arms reach both
    sub = Subtask(text="put the green block on the red block", action="place",
                  obj=ObjectRef(phrase="the green block", color="green", label="block"),
                  target=ObjectRef(phrase="the red block", color="red", label="block"), relation="on")
    ctx = fake_context(FakeWorld.blocks(("green", 0.02, -0.05), ("red", 0.04, -0.1)))
    plan = RulesThinker().think(sub, {"green_block": green, "red_block": red}, SceneMemory(objects=[green, red]),
                                attempt, feedback, ctx, CallLog(), failed=failed)
    return [(c.skill, c.arm, dict(c.args)) for c in plan.calls]


@pytest.mark.parametrize("message", MISLEADING)
def test_the_thinker_keeps_the_arm_after_a_guard_refusal_whose_message_contains_ik_or_plan(message: str) -> None:
    refused = FailedStep(kind=FailureKind.REFUSED_BY_GUARD, skill="place_actor", arm="right")
    calls = _think(1, f"place_actor failed: {message}", refused)
    assert calls[0][:2] == ("grasp_actor", "right")  # the object's own side, as on a first attempt


def test_the_thinker_tries_the_other_arm_after_an_unreachable_target_whatever_the_message() -> None:
    unreachable = FailedStep(kind=FailureKind.UNREACHABLE, skill="place_actor", arm="right")
    calls = _think(1, "place_actor failed: something went wrong", unreachable)
    assert calls[0][:2] == ("grasp_actor", "left")


def test_the_thinker_regrasps_the_same_way_after_an_empty_grasp_and_differently_after_a_miss_off_target() -> None:
    empty = FailedStep(kind=FailureKind.GRASP_EMPTY, skill="grasp_actor", arm="right")
    assert _think(2, "grasp_actor failed: approach grasp", empty)[0][2] == {}
    off = FailedStep(kind=FailureKind.GRASP_OFF_TARGET, skill="grasp_actor", arm="right")
    args = _think(2, "something", off)[0][2]
    assert args == {"pre_grasp_dis": pytest.approx(0.06), "contact_point_id": 2}
    unreachable = FailedStep(kind=FailureKind.UNREACHABLE, skill="grasp_actor", arm="right")
    assert "contact_point_id" not in _think(2, "something", unreachable)[0][2]  # every grasp point was tried
