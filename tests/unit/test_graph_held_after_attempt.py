"""An object a failed attempt left in a hand is looked for at the hand: three alike bottles, two in the bin and one
held up after a place with no inverse-kinematics solution, were told apart by where each was last localised, and the
held one, last localised where it stood, was taken for a bottle in the bin (the graph then grasped at the bin)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langgraph.runtime import Runtime

from mallvi.contracts.observation import Observation
from mallvi.contracts.skills import FailureKind
from mallvi.graph.in_hand import holding_arm
from mallvi.graph.nodes.actor import actor
from mallvi.graph.nodes.descriptor import descriptor
from mallvi.graph.nodes.grounder import grounder
from mallvi.graph.scene_memory import reconcile
from mallvi.graph.schemas import (
    ActionPlan,
    ActorReport,
    CommandRecord,
    Detection2D,
    ObjectRef,
    Plan,
    SceneMemory,
    SceneObject,
    SkillCall,
    Subtask,
)
from mallvi.graph.state import initial_state
from tests.fixtures.graph_fakes import TABLE_Z, FakeObject, FakePerception, FakeWorld, fake_context

PUT = "put the bottles into the bin"
IN_BIN = {"bottle_a": (-0.38, 0.05), "bottle_b": (-0.37, -0.06)}
HELD_AT = [-0.35, -0.13, 1.02]  # up in the left hand, above the bin's side
STOOD_AT = (-0.25, 0.10, TABLE_Z + 0.01)  # where the held bottle was last localised, before the grasp


def _cmd(skill: str, arm: str, ok: bool = True, ref: str | None = None, **args: Any) -> CommandRecord:
    return CommandRecord(skill=skill, arm=arm, args=args, ok=ok, message="", ref=ref,
                         kind=None if ok else FailureKind.NO_PLAN)


def test_what_an_attempt_left_in_a_hand() -> None:
    grasp = _cmd("grasp_actor", "left", ref="b1")
    assert ActorReport(ok=False, message="", commands=[grasp, _cmd("place_actor", "left", False, "b1")]
                       ).left_in_hand() == {"b1": "left"}, "a place whose motion had no plan keeps it in hand"
    assert ActorReport(ok=True, message="", commands=[grasp, _cmd("place_actor", "left", ref="b1")]
                       ).left_in_hand() == {}
    assert ActorReport(ok=False, message="", commands=[grasp, _cmd("open_gripper", "left", recovery=True)]
                       ).left_in_hand() == {}, "a recovery that opened the hand let it go"
    assert ActorReport(ok=True, message="", commands=[grasp, _cmd("open_gripper", "right"),
                                                      _cmd("grasp_actor", "right", ref="b2")]
                       ).left_in_hand() == {"b1": "left", "b2": "right"}
    assert ActorReport(ok=False, message="", commands=[grasp, _cmd("grasp_actor", "left", False, "b2")]
                       ).left_in_hand() == {"b1": "left"}, "a failed grasp of another object took nothing"
    assert ActorReport(ok=True, message="", commands=[_cmd("close_gripper", "left", ref="b3")]
                       ).left_in_hand() == {"b3": "left"}


@dataclass
class _Camera(FakePerception):
    """Each detection's box where its object is in the fake camera's picture (identity intrinsics and pose)."""

    def detect(self, obs: Observation, queries: dict[str, str]) -> dict[str, list[Detection2D]]:
        out = {}
        for key, text in queries.items():
            out[key] = []
            for o in self.world.objects.values():
                if f"{o.color} {o.label}" == text:
                    u, v = o.pos[0] / o.pos[2], o.pos[1] / o.pos[2]
                    out[key].append(Detection2D(query=text, box_xyxy=(u - 0.01, v - 0.01, u + 0.01, v + 0.01),
                                                score=0.9, label=text, source=o.name))
        return out


def _bottle(name: str, pos: list[float]) -> FakeObject:
    return FakeObject(name, "white", "bottle", pos, size=0.07)


def _state(world: FakeWorld, report: ActorReport) -> dict[str, Any]:
    def seen(name: str, at: tuple[float, ...] | list[float]) -> SceneObject:
        return SceneObject(id=name, label="bottle", color="white", size_m=(0.07, 0.07, 0.2), position_m=tuple(at),
                           source="fake")
    scene = [seen(n, o.pos) for n, o in world.objects.items()]
    localized = {o.id: o for o in scene} | {"bottle_c": seen("bottle_c", STOOD_AT)}
    ref = ObjectRef(phrase="the bottle", label="bottle", instance="bottle_c")
    state = dict(initial_state(PUT))
    state.update(plan=Plan(subtasks=[Subtask(text="put it into the bin", action="place", obj=ref)]),
                 subtask_index=0, scene=SceneMemory(objects=scene), localized=localized,
                 focus=["bottle_c", "bottle_a", "bottle_b"], actor_report=report, in_hand=report.left_in_hand())
    return state


def test_the_bottle_a_failed_place_left_in_the_hand_is_looked_for_at_the_hand() -> None:
    world = FakeWorld({n: _bottle(n, [x, y, TABLE_Z + 0.1]) for n, (x, y) in IN_BIN.items()})
    world.objects["bottle_c"] = _bottle("bottle_c", HELD_AT)
    world.held["left"], world.grip["left"] = "bottle_c", 0.4
    ctx = fake_context(world, perception=_Camera(world))
    failed_place = ActorReport(ok=False, message="place_actor failed", commands=[
        _cmd("grasp_actor", "left", ref="bottle_c"), _cmd("place_actor", "left", False, "bottle_c"),
        _cmd("back_to_origin", "left", recovery=True)])
    state = _state(world, failed_place)
    assert holding_arm(state, ctx, "bottle_c") == "left"  # type: ignore[arg-type]
    chosen = grounder(state, Runtime(context=ctx))["detections"]  # type: ignore[arg-type]
    assert {oid: d.source for oid, d in chosen.items()} == {n: n for n in ("bottle_a", "bottle_b", "bottle_c")}

    # the same scene after a place that let the bottle go: nothing says a hand holds it, it is looked for where it
    # was last localised (the nearest detection there is a bottle in the bin)
    world.held["left"], world.grip["left"] = None, 1.0
    placed = ActorReport(ok=True, message="", commands=[_cmd("grasp_actor", "left", ref="bottle_c"),
                                                        _cmd("place_actor", "left", ref="bottle_c")])
    state = _state(world, placed)
    assert holding_arm(state, ctx, "bottle_c") is None  # type: ignore[arg-type]
    assert grounder(state, Runtime(context=ctx))["detections"]["bottle_c"].source == "bottle_a"


def _seen(name: str, x: float, y: float, label: str = "bottle") -> SceneObject:
    return SceneObject(id=name, label=label, color="white", size_m=(0.07, 0.07, 0.2), position_m=(x, y, 0.84),
                       source="fake")


def test_a_rescan_whose_alike_names_shifted_keeps_each_object_under_its_own_id() -> None:
    # bottle_2 went up out of view in a hand: the scan names the two it sees "bottle" and "bottle_2" in its order
    before = [_seen("bottle", -0.38, 0.04), _seen("bottle_2", 0.30, -0.10), _seen("bottle_3", -0.35, -0.09)]
    scan = [_seen("bottle", -0.38, 0.04), _seen("bottle_2", -0.35, -0.09)]
    objects, _ = reconcile(before, scan, [], {"bottle_2": (0.35, 0.0, 1.2)})
    assert {o.id: o.position_m[:2] for o in objects} == {"bottle": (-0.38, 0.04), "bottle_3": (-0.35, -0.09)}
    # two names swapped: each goes back to the object that stands where it was
    swapped = [_seen("bottle", -0.35, -0.09), _seen("bottle_3", -0.38, 0.04)]
    objects, _ = reconcile(before, swapped, [], {"bottle_2": (0.35, 0.0, 1.2)})
    assert {o.id: o.position_m[:2] for o in objects} == {"bottle_3": (-0.35, -0.09), "bottle": (-0.38, 0.04)}
    # a bowl put on an alike one: both were last known at the nest, which is which is not guessed
    bowls = [_seen("bowl", 0.0, -0.1, "bowl"), _seen("bowl_2", 0.0, -0.1, "bowl")]
    nest = [_seen("bowl", 0.0, -0.1, "bowl"), _seen("bowl_2", 0.01, -0.1, "bowl")]
    assert [o.id for o in reconcile(bowls, nest, [])[0]] == ["bowl", "bowl_2"]


@dataclass
class _NamesInOrder(FakePerception):
    """A scan that names alike objects in its own order (bottle, bottle_2, ...) and cannot see a held one."""

    def scan(self, obs: Observation) -> list[SceneObject]:
        held = set(self.world.held.values())
        seen = [o for o in super().scan(obs) if o.id not in held]
        return [o.model_copy(update={"id": "bottle" if i == 0 else f"bottle_{i + 1}"}) for i, o in enumerate(seen)]


def test_a_rescan_keeps_the_bottle_a_hand_holds_out_of_view_and_the_others_under_their_ids() -> None:
    world = FakeWorld({"bottle": _bottle("bottle", [-0.38, 0.04, 0.84]),
                       "bottle_2": _bottle("bottle_2", [0.35, 0.0, 1.2]),
                       "bottle_3": _bottle("bottle_3", [-0.35, -0.09, 0.84])})
    world.held["right"], world.grip["right"] = "bottle_2", 0.4
    ctx = fake_context(world, perception=_NamesInOrder(world))
    scene = [_seen("bottle", -0.38, 0.04), _seen("bottle_2", 0.30, -0.10), _seen("bottle_3", -0.35, -0.09)]
    state = _state(world, ActorReport(ok=False, message="no object within 3 cm of perceived bottle_2"))
    state.update(scene=SceneMemory(objects=scene), localized={o.id: o for o in scene},
                 bindings={"b1": "bottle", "b2": "bottle_2", "b3": "bottle_3"}, in_hand={"bottle_2": "right"},
                 stage_error=None)
    update = descriptor(state, Runtime(context=ctx))  # type: ignore[arg-type]
    rescanned = update["scene"]
    where = {o.id: (round(o.position_m[0], 2), round(o.position_m[1], 2)) for o in rescanned.objects}
    assert where == {"bottle": (-0.38, 0.04), "bottle_3": (-0.35, -0.09), "bottle_2": (0.35, 0.0)}
    assert rescanned.get("bottle_2").source == "memory: held by the right gripper"  # type: ignore[union-attr]
    # the retry's Grounder tells the bottles apart by where the re-scan saw them, not where they were localised
    assert {k: (round(o.position_m[0], 2), round(o.position_m[1], 2)) for k, o in update["localized"].items()} == where


def test_the_actor_carries_what_the_hands_hold_across_attempts() -> None:
    world = FakeWorld({"bottle_c": _bottle("bottle_c", [0.1, -0.1, TABLE_Z + 0.1])})
    ctx = fake_context(world)
    state = _state(world, ActorReport(ok=False, message=""))
    state.update(action_plan=ActionPlan(calls=[SkillCall(skill="grasp_actor", arm="left", object="bottle_c")]),
                 localized={"bottle_c": _seen("bottle_c", 0.1, -0.1)})
    update = actor(state, Runtime(context=ctx))  # type: ignore[arg-type]
    assert update["actor_report"].ok and update["in_hand"] == {"bottle_c": "left"}
    # the next attempt is refused before anything moves (an object never localised): the record stands
    state.update(update, action_plan=ActionPlan(calls=[SkillCall(skill="place_actor", arm="left", object="bin")]))
    update = actor(state, Runtime(context=ctx))  # type: ignore[arg-type]
    assert not update["actor_report"].ok and update["in_hand"] == {"bottle_c": "left"}
    assert holding_arm({**state, **update}, ctx, "bottle_c") == "left"  # type: ignore[arg-type]
