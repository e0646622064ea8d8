"""The whole-plan argument check: one table, read from the skills' declared signatures, that refuses every
malformed argument the skills themselves refuse (and unknown keywords), before a plan's first call runs; and the
Decomposer's JSON schema, which bounds a goal predicate exactly as its validator does."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from mallvi.contracts.skills import FailureKind, SkillAPI, SkillResult
from mallvi.graph.backends.llm.agents import DecomposerAnswer, DescriptorAnswer
from mallvi.graph.backends.llm.decoding import request_options
from mallvi.graph.nodes.actor import actor
from mallvi.graph.schemas import ActionPlan, Predicate, SceneObject, SkillCall
from mallvi.robot_drivers.safety import skill_args
from mallvi.robot_drivers.safety.skill_args import check_call, check_plan, skill_signatures

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.fixtures
from tests.fixtures.graph_fakes import TABLE_Z, FakeWorld, fake_context
from tests.fixtures.malformed_args import malformed_call, skill_defaults

POSE = [-0.25, 0.0, 0.95, 1.0, 0.0, 0.0, 0.0]
DEFAULTS = skill_defaults("red_block", "left", POSE)


def test_every_declared_skill_has_a_check_for_every_parameter() -> None:
    declared = {n for n in dir(SkillAPI) if not n.startswith("_") and callable(getattr(SkillAPI, n))}
    table = skill_signatures()
    assert set(table) == declared == set(DEFAULTS)
    for skill, params in table.items():
        assert set(params) == set(DEFAULTS[skill]), skill


def test_a_parameter_of_a_kind_the_table_does_not_know_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    class Extended(SkillAPI):  # a skill someone adds with a new kind of argument
        def spin(self, arm_tag: Literal["left", "right"], turns: complex = 1j) -> SkillResult: ...

    monkeypatch.setattr("mallvi.contracts.skills.SkillAPI", Extended)
    skill_signatures.cache_clear()
    try:
        with pytest.raises(TypeError, match=r"spin\(turns"):
            skill_signatures()
    finally:
        monkeypatch.undo()
        skill_signatures.cache_clear()


@pytest.mark.parametrize("skill", sorted(DEFAULTS))
def test_well_formed_calls_pass(skill: str) -> None:
    assert check_call(skill, DEFAULTS[skill], {"red_block"}) is None


@settings(max_examples=400, deadline=None)
@given(call=malformed_call(DEFAULTS))
def test_property_every_malformed_call_is_refused_with_a_kind(call: tuple[str, dict[str, Any]]) -> None:
    skill, kwargs = call
    bad = check_call(skill, kwargs, {"red_block"})
    assert bad is not None, (skill, kwargs)
    assert bad.kind in (FailureKind.BAD_PARAMETERS, FailureKind.UNKNOWN_OBJECT)
    assert bad.message.startswith(f"{skill}: ")


@pytest.mark.parametrize(("skill", "kwargs", "words"), [
    ("place_actor", {"target_pose": [0.1, 0.0, 0.8, 0.0, 0.0, 0.0, 0.0]}, ["target_pose", "norm 0"]),
    ("place_actor", {"target_pose": [0.1, 0.0, 0.8, 0.9, 0.0, 0.0, 0.0]}, ["not a unit quaternion"]),
    ("place_actor", {"speed": 2.0}, ["no argument(s) 'speed'"]),
    ("grasp_actor", {"actor": "purple_block"}, ["unknown object 'purple_block' (actor)", "red_block"]),
    ("grasp_actor", {"arm_tag": "both"}, ["arm"]),
    ("grasp_actor", {"pre_grasp_dis": float("inf")}, ["pre_grasp_dis", "finite"]),
    ("open_gripper", {"pos": 1.5}, ["pos", "0 (closed) .. 1 (open)"]),
    ("move_by_displacement", {"quat": [0.0, 0.0, 0.0, 0.0]}, ["quat", "norm 0"]),
    ("execute_ee_action", {"action": [*POSE, 1.0, *POSE[:3], 0.0, 0.0, 0.0, 0.0, 1.0]}, ["action", "norm 0"]),
    ("execute_ee_action", {"action": [*POSE, 2.0, *POSE, 1.0]}, ["gripper opening at position 7"]),
])
def test_the_refusal_names_the_skill_and_the_argument(skill: str, kwargs: dict[str, Any], words: list[str]) -> None:
    bad = check_call(skill, {**DEFAULTS[skill], **kwargs}, {"red_block"})
    assert bad is not None
    for w in words:
        assert w in bad.message, bad.message


def test_a_plan_is_refused_at_its_first_malformed_call() -> None:
    plan = [("grasp_actor", DEFAULTS["grasp_actor"]), ("move_by_displacement", DEFAULTS["move_by_displacement"]),
            ("place_actor", {**DEFAULTS["place_actor"], "target_pose": [0.0, 0.0, 0.9, 0, 0, 0, 0]}),
            ("open_gripper", {"arm_tag": "left", "pos": 7})]
    found = check_plan(plan, {"red_block"})
    assert found is not None and found[0] == 2 and "target_pose" in found[1].message
    assert check_plan(plan[:2], {"red_block"}) is None


def _actor(calls: list[SkillCall]) -> tuple[FakeWorld, Any, list[dict[str, Any]]]:
    w = FakeWorld.blocks(("red", 0.1, 0.0), ("green", 0.2, -0.05))
    events: list[dict[str, Any]] = []
    ctx = fake_context(w)
    ctx.trace = SimpleNamespace(emit=lambda kind, **kw: events.append({"kind": kind, **kw}))  # type: ignore[assignment]
    localized = {n: SceneObject(id=n, label="block", color=o.color, position_m=list(o.pos), size_m=[o.size] * 3)
                 for n, o in w.objects.items()}
    state = {"action_plan": ActionPlan(calls=calls), "localized": localized, "attempts": {}, "subtask_index": 0}
    return w, actor(state, SimpleNamespace(context=ctx))["actor_report"], events  # type: ignore[arg-type]


@pytest.mark.parametrize(("second", "words"), [
    (SkillCall(skill="place_actor", arm="right", object="green_block",
               target_pose=[0.1, 0.0, TABLE_Z + 0.04, 0.0, 0.0, 0.0, 0.0]), ["target_pose", "norm 0"]),
    (SkillCall(skill="place_actor", arm="right", object="green_block",
               target_pose=[0.1, 0.0, TABLE_Z + 0.04, 1.0, 0.0, 0.0, 0.0], args={"spin": 1.0}), ["'spin'"]),
    (SkillCall(skill="move_to_pose", arm="right", target_pose=[0.1, 0.0, TABLE_Z + 0.2, 1.0, 0.0, 0.0, 0.0],
               args={"speed": 2.0}), ["'speed'"]),
    (SkillCall(skill="place_actor", arm="right", object="green_block",
               target_pose=[0.1, 0.0, TABLE_Z + 0.04, 1.0, 0.0, 0.0, 0.0], args={"actor": "red_block"}),
     ["'args.actor'"]),
    (SkillCall(skill="open_gripper", arm="right", args={"pos": "wide"}), ["pos", "number"]),
])
def test_the_actor_refuses_the_whole_plan_before_its_first_call(second: SkillCall, words: list[str]) -> None:
    w, report, events = _actor([SkillCall(skill="grasp_actor", arm="right", object="green_block"), second])
    assert not report.ok and report.failed_step is not None
    assert report.failed_step.kind == "bad_parameters" and report.failed_step.skill == second.skill
    assert report.failed_stage == "thinker"
    assert "before anything moved" in report.message and f"call 2 of 2 ({second.skill}, right arm)" in report.message
    for word in words:
        assert word in report.message, report.message
    assert w.calls == []  # not even the grasp ran
    assert [e["command"] for e in events if e["kind"] == "safety_refusal"] == [second.skill]


def test_a_well_formed_plan_runs_every_call() -> None:
    w, report, _ = _actor([
        SkillCall(skill="grasp_actor", arm="right", object="green_block", args={"pre_grasp_dis": 0.1}),
        SkillCall(skill="place_actor", arm="right", object="green_block",
                  target_pose=[0.1, 0.0, TABLE_Z + 0.04, 1.0, 0.0, 0.0, 0.0], args={"pre_dis": 0.08, "dis": 0.005}),
        SkillCall(skill="open_gripper", arm="right", args={"pos": 1.0}),
        SkillCall(skill="back_to_origin", arm="right")])
    assert report.ok, report.message
    assert [c[0] for c in w.calls] == ["grasp_actor", "place_actor", "open_gripper", "back_to_origin"]


# -- the Decomposer's schema bounds a predicate as its validator does --------------------------------------------

def _predicate_schema(answer: type[Any]) -> dict[str, Any]:
    schema: dict[str, Any] = request_options("json_object_schema", answer.model_json_schema(), answer.__name__, 512,
                                             True, 8)["extra_body"]["response_format"]["schema"]
    return {**schema["$defs"]["Predicate"], "$defs": schema["$defs"]}


RELATIONS = list(Predicate.model_json_schema()["anyOf"][0]["properties"]["relation"]["enum"]) + list(
    Predicate.model_json_schema()["anyOf"][1]["properties"]["relation"]["enum"])


@settings(max_examples=300, deadline=None)
@given(relation=st.sampled_from([*RELATIONS, "under", ""]),
       args=st.lists(st.sampled_from(["", "red_block", "green_block", " "]), max_size=3),
       answer=st.sampled_from([DecomposerAnswer, DescriptorAnswer]))
def test_property_the_schema_sent_accepts_exactly_the_predicates_the_validator_accepts(
        relation: str, args: list[str], answer: type[Any]) -> None:
    data = {"relation": relation, "args": args}
    try:
        Predicate.model_validate(data)
        valid = True
    except ValidationError:
        valid = False
    try:
        jsonschema.validate(data, _predicate_schema(answer))
        allowed = True
    except jsonschema.ValidationError:
        allowed = False
    assert allowed == valid, data


def test_an_on_goal_with_one_empty_id_is_outside_the_schema() -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"relation": "on", "args": [""]}, _predicate_schema(DecomposerAnswer))
    assert set(RELATIONS) >= {"on", "lifted"} and skill_args.OBJECT_PARAM == "actor"
