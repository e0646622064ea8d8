"""The graph's side of standing toppled objects up: which objects count as tall or toppled, the plans the rules
Thinker makes for them, the llm Thinker's hints, and how the Actor binds and parks arms on a retry."""

from __future__ import annotations

import math
from typing import Any

from langgraph.runtime import Runtime

from mallvi.contracts.geometry import Pose
from mallvi.contracts.skills import FailureKind
from mallvi.contracts.world_model import ObjectInfo
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.llm.agents import LlmThinker
from mallvi.graph.backends.rules.thinker.thinker import RulesThinker
from mallvi.graph.context import GraphContext
from mallvi.graph.nodes.actor import actor, match_object
from mallvi.graph.posture import first_seen, is_tall, lies_on_side
from mallvi.graph.schemas import ActionPlan, FailedStep, ObjectRef, SceneMemory, SceneObject, SkillCall, Subtask
from mallvi.graph.state import initial_state
from tests.fixtures.graph_fakes import TABLE_Z, FakeWorld, fake_context
from tests.fixtures.world_models import FixedWorld

STANDING = (0.06, 0.06, 0.20)
LYING = (0.20, 0.06, 0.06)


def _bar(x: float, y: float, size: tuple[float, float, float] = STANDING) -> SceneObject:
    return SceneObject(id="red_block", label="block", color="red", position_m=(x, y, TABLE_Z + size[2] / 2),
                       size_m=size)


def _pad() -> SceneObject:
    return SceneObject(id="blue_pad", label="pad", color="blue", position_m=(0.15, 0.02, TABLE_Z + 0.005),
                       size_m=(0.1, 0.1, 0.01))


def _place_on_pad(arm_hint: str | None = None) -> Subtask:
    return Subtask(text="place the red block on the blue pad", action="place",
                   obj=ObjectRef(phrase="the red block", color="red", label="block"),
                   target=ObjectRef(phrase="the blue pad", color="blue", label="pad"), relation="on",
                   arm_hint=arm_hint)  # type: ignore[arg-type]


def _handover() -> Subtask:
    return Subtask(text="hand the red block over", action="handover", arm_hint="left",
                   obj=ObjectRef(phrase="the red block", color="red", label="block"))


def _think(subtask: Subtask, bar: SceneObject, attempt: int = 0, feedback: str | None = None,
           failed: FailedStep | None = None) -> ActionPlan:
    first = [_bar(-0.18, -0.02), _pad()]  # the first scan saw the bar standing
    localized = {"red_block": bar, "blue_pad": _pad()}
    ctx = fake_context(FakeWorld.blocks(("red", bar.position_m[0], bar.position_m[1])))
    return RulesThinker().think(subtask, localized, SceneMemory(objects=[bar, _pad()], initial=first), attempt,
                                feedback, ctx, CallLog(), failed=failed)


def _calls(plan: ActionPlan) -> list[tuple[str, str]]:
    return [(c.skill, c.arm) for c in plan.calls]


def test_tall_and_toppled_are_judged_against_the_first_scan() -> None:
    standing, lying = _bar(0.1, 0.0), _bar(0.1, 0.0, LYING)
    assert is_tall(standing) and not is_tall(lying)
    assert lies_on_side(lying, standing) and not lies_on_side(standing, standing)
    assert not lies_on_side(lying, lying), "an object that lay flat from the start has not toppled"
    renamed = lying.model_copy(update={"id": "red_object"})
    assert first_seen(renamed, [standing, _pad()]) == standing, "found again by its colour and label"


def test_a_toppled_bar_is_stood_up_before_it_is_carried() -> None:
    plan = _think(_place_on_pad(), _bar(0.12, -0.05, LYING))
    assert _calls(plan) == [("upright_actor", "right"), ("place_actor", "right"), ("back_to_origin", "right")]
    assert "lies on its side" in plan.rationale


def test_a_standing_bar_is_picked_up_with_upright_actor_too_a_cube_with_grasp_actor() -> None:
    assert _calls(_think(_place_on_pad(), _bar(0.12, -0.05)))[0] == ("upright_actor", "right")
    cube = SceneObject(id="red_block", label="block", color="red", position_m=(0.12, -0.05, TABLE_Z + 0.025),
                       size_m=(0.05,) * 3)
    first = [cube, _pad()]
    ctx = fake_context(FakeWorld.blocks(("red", 0.12, -0.05)))
    plan = RulesThinker().think(_place_on_pad(), {"red_block": cube, "blue_pad": _pad()},
                                SceneMemory(objects=first, initial=first), 0, None, ctx, CallLog())
    assert _calls(plan)[0] == ("grasp_actor", "right")


def test_a_handover_of_a_tall_bar_is_made_in_mid_air() -> None:
    plan = _think(_handover(), _bar(-0.18, -0.02))
    assert _calls(plan) == [("grasp_actor", "left"), ("place_actor", "left"), ("grasp_actor", "right"),
                            ("open_gripper", "left"), ("back_to_origin", "left"), ("move_by_displacement", "right")]
    held_up = plan.calls[1]
    assert held_up.args["is_open"] is False and held_up.target_pose is not None
    assert held_up.target_pose[2] > TABLE_Z + 0.05, "the giver holds the bar up off the table for the receiver"
    assert all(c.skill != "place_actor" or c.args.get("is_open") is False for c in plan.calls)


def _left_holds(bar: SceneObject, other: str | None = None) -> GraphContext:
    """A context where the left gripper holds the bar where it is seen (the right one ``other``, if given)."""
    world = FakeWorld.blocks(("red", bar.position_m[0], bar.position_m[1]), ("green", 0.2, -0.1))
    world.objects["red_block"].pos = list(bar.position_m)
    world.held["left"] = "red_block"
    world.held["right"] = other
    return fake_context(world)


def test_a_gripper_holding_something_else_is_not_taken_for_one_that_holds_the_object() -> None:
    # the right gripper senses something between its fingers: the green block, held away from the bar
    bar, green = _bar(0.12, -0.05), SceneObject(id="green_block", label="block", color="green",
                                                position_m=(0.2, -0.1, TABLE_Z + 0.02), size_m=(0.04,) * 3)
    world = FakeWorld.blocks(("red", 0.12, -0.05), ("green", 0.2, -0.1))
    world.held["right"] = "green_block"
    plan = RulesThinker().think(_place_on_pad(), {"red_block": bar, "blue_pad": _pad(), "green_block": green},
                                SceneMemory(objects=[bar, _pad(), green], initial=[bar, _pad(), green]), 0, None,
                                fake_context(world), CallLog())
    assert plan.calls[0].skill in ("grasp_actor", "upright_actor") and plan.calls[0].object == "red_block", \
        "the bar on the table is taken first, not placed as if it were in hand"
    # in hand: placed at once
    world.held["right"], world.objects["red_block"].pos = "red_block", list(bar.position_m)
    plan = RulesThinker().think(_place_on_pad(), {"red_block": bar, "blue_pad": _pad(), "green_block": green},
                                SceneMemory(objects=[bar, _pad(), green], initial=[bar, _pad(), green]), 0, None,
                                fake_context(world), CallLog())
    assert _calls(plan)[0] == ("place_actor", "right")


def test_a_hand_over_is_offered_by_the_giver_holding_the_bar_while_the_other_holds_something_else() -> None:
    bar = _bar(-0.18, -0.02)
    plan = RulesThinker().think(_handover(), {"red_block": bar, "blue_pad": _pad()},
                                SceneMemory(objects=[bar, _pad()], initial=[bar, _pad()]), 0, None,
                                _left_holds(bar, other="green_block"), CallLog())
    assert _calls(plan)[0] == ("place_actor", "left"), "no new grasp: the left arm holds the bar"


def test_a_failed_take_in_mid_air_is_tried_again_from_another_pose_with_the_bar_still_held() -> None:
    first = _think(_handover(), _bar(-0.18, -0.02))
    feedback = "grasp_actor failed: no reachable grasp of red_block for the right arm"
    failed = FailedStep(kind=FailureKind.UNREACHABLE, skill="grasp_actor", arm="right")
    bar = _bar(-0.18, -0.02)
    ctx = _left_holds(bar)  # the giver kept the bar
    again = RulesThinker().think(_handover(), {"red_block": bar, "blue_pad": _pad()},
                                 SceneMemory(objects=[bar, _pad()], initial=[bar, _pad()]), 1, feedback, ctx,
                                 CallLog(), failed=failed)
    assert _calls(again)[0] == ("place_actor", "left"), "no new grasp: the left arm still holds the bar"
    assert again.calls[0].target_pose != first.calls[1].target_pose, "another hand-over pose first"


def _held_by_left(bar: SceneObject, initial: list[SceneObject], failed: FailedStep, attempt: int) -> ActionPlan:
    ctx = _left_holds(bar)
    return RulesThinker().think(_handover(), {"red_block": bar, "blue_pad": _pad()},
                                SceneMemory(objects=[bar, _pad()], initial=initial), attempt, "grasp_actor failed", ctx,
                                CallLog(), failed=failed)


def test_a_bar_turned_askew_in_the_givers_hand_is_set_down_standing_and_taken_afresh() -> None:
    # the other hand's fingers pushed the held bar: it now leans 35 degrees in the giver's grasp, where no grasp of
    # the receiver's reaches past the giver's fingers; a fresh grasp of it standing is the way out
    first = _bar(-0.18, -0.02).model_copy(update={"points": {"fp0": [-0.18, -0.02, TABLE_Z, 1.0, 0.0, 0.0, 0.0]}})
    lean = math.radians(35.0)
    askew = _bar(-0.30, -0.09).model_copy(update={"position_m": (-0.30, -0.09, TABLE_Z + 0.27), "points": {
        "fp0": [-0.30, -0.06, TABLE_Z + 0.2, math.cos(lean / 2), math.sin(lean / 2), 0.0, 0.0]}})
    failed = FailedStep(kind=FailureKind.GRASP_OFF_TARGET, skill="grasp_actor", arm="right")
    assert _calls(_held_by_left(askew, [first, _pad()], failed, attempt=1))[0:2] == [
        ("place_actor", "left"), ("grasp_actor", "right")], "first offered again askew: another pose often reaches it"
    plan = _held_by_left(askew, [first, _pad()], failed, attempt=2)
    # only the set-down: the next attempt plans the hand-over from where the bar then stands (or lies)
    assert _calls(plan) == [("place_actor", "left"), ("back_to_origin", "left")]
    set_down = plan.calls[0]
    assert set_down.target_pose is not None and set_down.target_pose[:3] == [-0.18, -0.02, TABLE_Z], \
        "set down standing where it was first seen"
    assert set_down.args.get("is_open", True) is True and set_down.args["constrain"] == "align", "and let go"
    assert "held askew" in plan.rationale
    upright = askew.model_copy(update={"points": {"fp0": [-0.30, -0.06, TABLE_Z + 0.2, 1.0, 0.0, 0.0, 0.0]}})
    assert _calls(_held_by_left(upright, [first, _pad()], failed, attempt=2))[0:2] == [("place_actor", "left"),
                                                                           ("grasp_actor", "right")], \
        "held straight: offered again at once, never set down"


def test_a_toppled_bar_is_stood_up_by_the_giver_before_the_handover() -> None:
    plan = _think(_handover(), _bar(-0.12, -0.05, LYING))
    assert _calls(plan)[0] == ("upright_actor", "left")
    assert ("grasp_actor", "right") in _calls(plan)


def test_a_named_placing_arm_gets_the_bar_relayed_to_it_and_tries_itself_when_the_relay_cannot_start() -> None:
    # standing at x = -0.08 the bar's grasp (near its top, 0.175 m up) is out of the right arm's reach
    relayed = _calls(_think(_place_on_pad("right"), _bar(-0.08, -0.06)))
    assert relayed[0] == ("upright_actor", "left") and relayed[3] == ("upright_actor", "right")
    feedback = ("upright_actor failed: red_block already stands upright: no reachable grasp of red_block for the "
                "left arm")
    failed = FailedStep(kind=FailureKind.UNREACHABLE, skill="upright_actor", arm="left")
    direct = _calls(_think(_place_on_pad("right"), _bar(-0.08, -0.06), attempt=1, feedback=feedback, failed=failed))
    assert direct == [("upright_actor", "right"), ("place_actor", "right"), ("back_to_origin", "right")]


def test_the_llm_thinker_is_told_which_objects_are_tall_and_which_lie_on_their_side() -> None:
    asked: dict[str, Any] = {}

    class Client:
        def ask(self, node: str, system: str, user: str, schema: type, log: CallLog, **kw: Any) -> ActionPlan:
            asked.update(system=system, user=user)
            return ActionPlan(calls=[SkillCall(skill="upright_actor", arm="right", object="red_block")])

    bar = _bar(0.12, -0.05, LYING)
    first = [_bar(-0.18, -0.02), _pad()]
    ctx = fake_context(FakeWorld.blocks(("red", 0.12, -0.05)))
    LlmThinker(Client()).think(_place_on_pad(), {"red_block": bar, "blue_pad": _pad()},  # type: ignore[arg-type]
                               SceneMemory(objects=[bar, _pad()], initial=first), 0, None, ctx, CallLog())
    assert "upright_actor(object, arm)" in asked["system"]
    assert "Tall objects (pick up with upright_actor): ['red_block']" in asked["user"]
    assert "Lying on their side now: ['red_block']" in asked["user"]


def _bar_world() -> FixedWorld:
    """One standing bar (box centre 0.1 m above its bottom) and one cube."""
    bar = ObjectInfo("red_block", "block", Pose((0.10, 0.0, TABLE_Z)), STANDING, "red",
                     {"bbox_center": Pose((0.10, 0.0, TABLE_Z + 0.10))})
    cube_at = Pose((-0.15, 0.0, TABLE_Z + 0.025))
    return FixedWorld(bar, ObjectInfo("green_block", "block", cube_at, (0.05,) * 3, "green", {"bbox_center": cube_at}))


def test_a_perceived_centre_on_a_tall_bar_binds_to_it_even_far_from_its_true_centre() -> None:
    world = _bar_world()
    on_bar = _bar(0.10, 0.0).model_copy(update={"position_m": (0.11, 0.0, TABLE_Z + 0.16)})  # 6 cm above centre
    name, why = match_object(on_bar, world, 0.03)
    assert name == "red_block", why
    beside = on_bar.model_copy(update={"position_m": (0.16, 0.0, TABLE_Z + 0.16)})  # 3 cm off its side
    assert match_object(beside, world, 0.03)[0] is None


def _place_attempt(attempts: dict[str, int]) -> list[tuple[str, str]]:
    world = FakeWorld.blocks(("red", 0.1, 0.0))
    world.held["right"] = "red_block"
    ctx = fake_context(world)  # the fake Station senses what each gripper holds
    x, y, z = world.objects["red_block"].pos
    perceived = SceneObject(id="red_block", label="block", color="red", position_m=(x, y, z), size_m=(0.04,) * 3)
    plan = ActionPlan(calls=[SkillCall(skill="place_actor", arm="right", object="red_block",
                                       target_pose=[0.1, 0.1, TABLE_Z, 1.0, 0.0, 0.0, 0.0])])
    state: Any = {**initial_state(""), "action_plan": plan, "localized": {"red_block": perceived}, "subtask_index": 0,
                  "attempts": attempts}
    out = actor(state, Runtime(context=ctx))
    assert out["actor_report"].ok, out["actor_report"].message
    return [(c[0], c[1]) for c in world.calls]


def test_a_retry_starts_with_the_empty_handed_arms_sent_home() -> None:
    assert _place_attempt({"0": 1}) == [("back_to_origin", "left"), ("place_actor", "right")]
    assert _place_attempt({}) == [("place_actor", "right")], "a first attempt moves only what it plans"


def _after_a_fault(bar: SceneObject) -> ActionPlan:
    """The plan for the bar after a place put it down off the pad."""
    from mallvi.graph.failure_memory import FailedAttempt

    first = [_bar(-0.18, -0.02), _pad()]
    ctx = fake_context(FakeWorld.blocks(("red", bar.position_m[0], bar.position_m[1])))
    off = FailedAttempt(strategy="place right", object_id="red_block", pose_m=list(bar.position_m),
                        kind="wrong_placement")
    return RulesThinker().think(_place_on_pad("right"), {"red_block": bar, "blue_pad": _pad()},
                                SceneMemory(objects=[bar, _pad()], initial=first), 1, None, ctx, CallLog(),
                                failures=[off])


def test_a_bar_a_fault_laid_down_near_the_edge_of_reach_is_pushed_back_along_its_length_first() -> None:
    """A miss at a lying bar's top end pushes it along its axis by nearly its length, so a bar lying within its
    length of the edge of the right arm's reach is pushed back towards the middle first, and the push starts beside
    its end face (the extent of its box along the push), close enough to move it; a standing bar there is not."""
    plan = _after_a_fault(_bar(0.22, -0.05, LYING))
    skills = [c.skill for c in plan.calls]
    assert skills[0] == "close_gripper" and plan.strategy.startswith("nudge back"), skills
    start = plan.calls[1].target_pose
    push = next(c.args for c in plan.calls if c.skill == "move_by_displacement" and "x" in c.args)
    assert start is not None and push["x"] < -0.05  # towards the middle of the reach
    end_face_x = 0.22 + LYING[0] / 2
    assert start[0] > end_face_x and start[0] + push["x"] < end_face_x - 0.05  # it moves the bar 5 cm or more
    assert skills[skills.index("upright_actor") + 1] == "place_actor"
    assert _calls(_after_a_fault(_bar(0.22, -0.05)))[0] == ("upright_actor", "right")


def test_a_held_object_no_way_on_reaches_is_set_down_where_both_arms_reach_never_pushed() -> None:
    bar = _bar(-0.18, -0.02)
    scene = SceneMemory(objects=[bar, _pad()], initial=[bar, _pad()])
    held = RulesThinker.into_reach(_handover(), bar, {"red_block": bar, "blue_pad": _pad()}, scene, _left_holds(bar))
    assert [_calls(p) for p in held] == [[("place_actor", "left"), ("back_to_origin", "left")]], \
        "a push of an object in the hand would only drop it"
    down = held[0].calls[0]
    assert down.target_pose is not None and abs(down.target_pose[0]) < 0.01 and down.target_pose[2] == TABLE_Z, \
        "set down on the table in the middle, where both arms reach"
    assert down.args.get("is_open", True) is True
    loose = RulesThinker.into_reach(_handover(), bar, {"red_block": bar, "blue_pad": _pad()}, scene,
                                    fake_context(FakeWorld.blocks(("red", -0.18, -0.02))))
    assert loose and loose[0].calls[0].skill == "close_gripper", "an object on the table is still nudged"
