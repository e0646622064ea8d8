"""Routing of the agent graph with a scripted fake chat model as the Reflector (other agents: rules)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mallvi.config import Budgets, LlmConfig
from mallvi.contracts.skills import FailureKind, SkillResult
from mallvi.graph.backends.llm.agents import LlmDecomposer, LlmReflector
from mallvi.graph.backends.llm.client import LlmClient
from mallvi.graph.backends.rules import rules_backends
from mallvi.graph.drive import drive

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.fixtures.graph_fakes import FakeWorld, fake_context, scripted_chat

CFG = LlmConfig(base_url="http://unused", backoff_s=0.0)
OK = json.dumps({"verdict": "success", "explanation": "done"})


def fail(agent: str, why: str = "scripted failure") -> str:
    return json.dumps({"verdict": "failure", "failure_category": "scripted", "blamed_agent": agent,
                       "explanation": why})


def _world() -> FakeWorld:
    return FakeWorld.blocks(("red", -0.2, 0.0), ("green", 0.2, 0.0), ("blue", 0.05, -0.1))


def _ctx(world: FakeWorld, verdicts: list[str], budgets: Budgets | None = None):  # type: ignore[no-untyped-def]
    b = rules_backends()
    b.reflector = LlmReflector(LlmClient(scripted_chat(verdicts), "fake-vlm", CFG))
    return fake_context(world, backends=b, budgets=budgets)


def test_a_failure_blamed_on_the_grounder_reruns_the_grounder_not_the_decomposer() -> None:
    out, _ = drive(_ctx(_world(), [fail("grounder"), OK]), "stack the green block on the red block")
    seq = out.node_sequence
    assert out.status == "succeeded" and out.graph_success
    assert seq.count("decomposer") == 1 and seq.count("perceptor") == 1 and seq.count("descriptor") == 1
    assert seq.count("grounder") == 2
    first_reflect = seq.index("reflector")
    assert seq[first_reflect + 1] == "grounder"  # straight back to the blamed agent
    assert out.attempts == {"0": 1}


def test_repeated_failure_triggers_a_descriptor_rescan() -> None:
    world = _world()
    ctx = _ctx(world, [fail("thinker"), fail("thinker"), OK])
    out, state = drive(ctx, "stack the green block on the red block")
    seq = out.node_sequence
    assert out.status == "succeeded"
    assert seq.count("descriptor") == 2 and seq.count("decomposer") == 1
    second_fail = [i for i, n in enumerate(seq) if n == "reflector"][1]
    assert seq[second_fail + 1] == "descriptor"
    assert state["scene"] is not None and state["scene"].scan_count == 2
    assert state["rescans"] == {"0": 1}


def test_an_exhausted_budget_ends_with_a_failure_report() -> None:
    world = _world()
    ctx = _ctx(world, [fail("thinker", f"attempt {i}") for i in range(10)],
               budgets=Budgets(max_attempts_per_subtask=3, rescan_after_failures=2))
    out, _ = drive(ctx, "stack the green block on the red block")
    assert out.status == "failed" and not out.graph_success
    report = out.failure_report
    assert report is not None and report.subtask_index == 0 and report.attempts == 3
    assert [v.explanation for v in report.history] == ["attempt 0", "attempt 1", "attempt 2"]
    assert "budget exhausted" in report.reason


def test_a_six_subtask_plan_completes_without_a_recursion_error() -> None:
    world = FakeWorld.blocks(("red", -0.25, 0.0), ("green", 0.25, 0.0), ("blue", -0.1, -0.12),
                             ("yellow", 0.1, -0.12))
    subtasks = []
    moves = [("red", "green"), ("red", "blue"), ("green", "yellow"), ("green", "red"), ("blue", "yellow"),
             ("yellow", "red")]
    for a, b in moves:
        subtasks.append({"text": f"put the {a} block right of the {b} block", "action": "place",
                         "obj": {"phrase": f"the {a} block", "color": a, "label": "block"},
                         "target": {"phrase": f"the {b} block", "color": b, "label": "block"},
                         "relation": "right_of",
                         "post": [{"relation": "right_of", "args": [f"{a}_block", f"{b}_block"]}]})
    plan = json.dumps({"subtasks": subtasks, "goal": []})
    b = rules_backends()
    b.decomposer = LlmDecomposer(LlmClient(scripted_chat([plan]), "fake-llm", CFG))
    # every subtask fails once (blamed on the thinker) before it succeeds: 12 attempts in one run
    b.reflector = LlmReflector(LlmClient(scripted_chat([fail("thinker"), OK] * 6), "fake-vlm", CFG))
    ctx = fake_context(world, backends=b)
    out, _ = drive(ctx, "six moves")
    assert out.status == "succeeded" and out.graph_success
    assert out.completed == list(range(6)) and out.node_sequence.count("actor") == 12
    assert ctx.budgets.recursion_limit() > len(out.node_sequence)


def test_a_missing_detection_is_reported_and_blamed_on_the_grounder_not_invented() -> None:
    from tests.fixtures.graph_fakes import FakePerception

    world = _world()
    perception = FakePerception(world)
    ctx = fake_context(world, perception=perception, budgets=Budgets(max_attempts_per_subtask=2))
    perception.hide = {"red_block"}  # the scan saw it, the grounder's fresh detection does not
    out, state = drive(ctx, "stack the green block on the red block")
    assert out.status == "failed"
    assert world.calls == []  # nothing was executed on a made-up position
    assert all(v.blamed_agent == "grounder" for v in state["history"])
    assert "not detected: red_block" in state["history"][0].explanation


def test_a_mislocalised_object_fails_in_the_actor_instead_of_using_the_true_name() -> None:
    from tests.fixtures.graph_fakes import FakePerception

    world = _world()
    perception = FakePerception(world, offset_m={"green_block": (0.06, 0.0, 0.0)})
    ctx = fake_context(world, perception=perception, budgets=Budgets(max_attempts_per_subtask=2))
    out, state = drive(ctx, "stack the green block on the red block")
    assert out.status == "failed" and world.calls == []
    assert "no object within 3 cm of perceived green_block" in state["history"][0].explanation
    assert state["history"][0].blamed_agent == "grounder"


def test_a_skill_failure_goes_back_to_the_agent_the_actor_blames() -> None:
    world = _world()
    world.fail_next["place_actor"] = SkillResult.failure(
        "cannot bring green_block above the target: no inverse-kinematics solution", FailureKind.UNREACHABLE)
    world.fail_times["place_actor"] = 5  # the place and each of its four alternatives (shorter, turned)
    out, _ = drive(fake_context(world), "stack the green block on the red block")
    seq = out.node_sequence
    assert out.status == "succeeded"
    i = seq.index("reflector")
    assert seq[i + 1] == "thinker"  # reach problems are the Thinker's
    # the failed attempt was cleaned up: the arm goes home still holding the block (nothing moved it to fall from),
    # and the retry places it from the hand without grasping it again
    failed_at = world.calls.index(("place_actor", "right", ("green_block", [0.0, -0.15, 0.74, 1.0, 0.0, 0.0, 0.0])))
    after = world.calls[failed_at + 1:]
    assert ("back_to_origin", "right", None) in after and ("open_gripper", "right", None) not in after
    assert [c for c in after if c[0] == "grasp_actor"] == [] and after[-2][0] == "place_actor"


def test_no_reflector_ablation_moves_on_without_checking() -> None:
    world = _world_offset()  # the place lands off target, reported as success
    ctx = fake_context(world)
    out, _ = drive(ctx, "stack the green block on the red block", with_reflector=False)
    assert out.graph_success and "reflector" not in out.node_sequence and "advance" in out.node_sequence
    assert abs(world.objects["green_block"].pos[0] - world.objects["red_block"].pos[0]) > 0.05  # not stacked
    world2 = _world_offset()
    out2, state2 = drive(fake_context(world2), "stack the green block on the red block")
    # with the Reflector the same fault is caught and the subtask retried until the block is really on top
    assert out2.node_sequence.count("actor") >= 2 and state2["history"] == []
    assert state2["attempts"]["0"] >= 1
    assert abs(world2.objects["green_block"].pos[0] - world2.objects["red_block"].pos[0]) < 0.01


def _world_offset() -> FakeWorld:
    w = FakeWorld.blocks(("red", -0.2, 0.0), ("green", -0.05, 0.05))
    w.place_offset_m = [0.08, 0.0]
    return w


def test_single_agent_ablation_plans_without_per_step_perception() -> None:
    from mallvi.graph.single_planner import drive_single

    world = _world()
    ctx = fake_context(world)
    out, _ = drive_single(ctx, "place the red, green and blue blocks from left to right")
    assert out.status == "succeeded"
    assert set(out.node_sequence) == {"planner", "actor"} and out.node_sequence.count("actor") == 3
    xs = [world.objects[f"{c}_block"].pos[0] for c in ("red", "green", "blue")]
    assert xs == sorted(xs)


def test_a_silent_misplacement_is_retried_from_the_reflectors_fresh_view() -> None:
    world = _world_offset()  # the place lands 8 cm off and reports success
    out, _ = drive(fake_context(world), "stack the green block on the red block")
    assert out.status == "succeeded" and out.attempts == {"0": 1}  # one retry, no wasted attempt on stale positions
    seq = out.node_sequence
    first = seq.index("reflector")
    assert seq[first + 1] == "thinker" and seq.count("grounder") == 1
    assert abs(world.objects["green_block"].pos[0] - world.objects["red_block"].pos[0]) < 0.01
