"""The second look for a lost object (hands that hold something go home, then an empty hand looks from above
through its wrist camera), a container held up set down before anything goes in, and a push of a container that
carries what lies in it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from langgraph.runtime import Runtime

from mallvi.contracts.geometry import ArmSide
from mallvi.contracts.observation import Observation
from mallvi.contracts.skills import SkillResult
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.rules.thinker.strategies import push_direction
from mallvi.graph.backends.rules.thinker.thinker import RulesThinker
from mallvi.graph.nodes.descriptor import descriptor
from mallvi.graph.scene_memory import LOOKED_PREFIX
from mallvi.graph.schemas import ObjectRef, SceneMemory, SceneObject, StageError, Subtask
from mallvi.graph.second_look import look_from_above
from mallvi.graph.state import initial_state
from tests.fixtures.graph_fakes import TABLE_Z, FakeObject, FakePerception, FakeWorld, fake_context

BASKET_SIZE = (0.14, 0.23, 0.175)


def _toy(x: float = 0.0, y: float = -0.05) -> SceneObject:
    return SceneObject(id="yellow_toy", label="toy", color="yellow", position_m=(x, y, TABLE_Z + 0.02),
                       size_m=(0.04, 0.04, 0.04))


def _basket(x: float, y: float, bottom_above_table_m: float = 0.0) -> SceneObject:
    return SceneObject(id="brown_basket", label="basket", color="brown", size_m=BASKET_SIZE,
                       position_m=(x, y, TABLE_Z + bottom_above_table_m + BASKET_SIZE[2] / 2))


def _world(toy: SceneObject, basket: SceneObject, holder: ArmSide | None) -> FakeWorld:
    world = FakeWorld({o.id: FakeObject(o.id, o.color or "", o.label, list(o.position_m)) for o in (toy, basket)})
    world.held[holder or "left"] = basket.id if holder else None
    return world


@dataclass
class ArmInTheWay(FakeWorld):
    """The fake world with an arm holding the basket up over the toy: the toy is hidden until that arm goes home."""

    out: set[str] = field(default_factory=set)

    def back_to_origin(self, arm_tag: ArmSide) -> SkillResult:
        self.out.discard(arm_tag)
        return super().back_to_origin(arm_tag)


@dataclass
class HiddenWhileOut(FakePerception):
    def scan(self, obs: Observation) -> list[SceneObject]:
        world = self.world
        assert isinstance(world, ArmInTheWay)
        return [o for o in super().scan(obs) if not (world.out and o.id == "yellow_toy")]


def _rescan(lost: bool, holder: ArmSide | None) -> tuple[ArmInTheWay, dict[str, object]]:
    toy, basket = _toy(), _basket(0.02, -0.22, 0.1)
    world = ArmInTheWay({o.id: FakeObject(o.id, o.color or "", o.label, list(o.position_m)) for o in (toy, basket)})
    if holder is not None:
        world.held[holder] = basket.id
        world.out.add(holder)
    ctx = fake_context(world, perception=HiddenWhileOut(world))
    state = initial_state("put the toy in the basket")
    state["scene"] = SceneMemory(objects=[basket], initial=[toy, basket], scan_count=3)
    state["stage_error"] = StageError(agent="perceptor", message="perceptor named objects not in the scene: "
                                      "['yellow_toy']", lost=lost)
    return world, descriptor(state, Runtime(context=ctx))


def test_a_lost_object_is_looked_for_again_with_the_arm_holding_something_sent_home_first() -> None:
    world, update = _rescan(lost=True, holder="left")
    assert ("back_to_origin", "left", None) in world.calls, "the arm holding the basket up went home"
    assert ("back_to_origin", "right", None) not in world.calls, "an empty hand is not moved by the look"
    scene = update["scene"]
    assert isinstance(scene, SceneMemory)
    assert "yellow_toy" in {o.id for o in scene.objects}, "with the arm out of the way the toy is seen again"
    assert len(update["image_ids"]) == 2, "both looks are kept"  # type: ignore[arg-type]


def test_a_rescan_for_another_reason_or_with_empty_hands_moves_no_arm() -> None:
    world, update = _rescan(lost=False, holder="left")
    assert not any(c[0] == "back_to_origin" for c in world.calls)
    scene = update["scene"]
    assert isinstance(scene, SceneMemory) and "yellow_toy" not in {o.id for o in scene.objects}
    world, _ = _rescan(lost=True, holder=None)
    assert not any(c[0] == "back_to_origin" for c in world.calls)


@dataclass
class SeenFromAbove(FakePerception):
    """The toy is hidden from the main camera; a wrist camera looking down shows it."""

    def scan(self, obs: Observation) -> list[SceneObject]:
        return [o for o in super().scan(obs) if obs.camera.endswith("_wrist") or o.id != "yellow_toy"]


def _wrist(world: FakeWorld, name: str) -> Callable[[], Observation]:
    return lambda: dataclasses.replace(world.observe(), camera=name)


def test_a_lost_toy_is_looked_for_from_above_by_an_empty_hand_never_by_one_that_holds_something() -> None:
    toy = _toy(0.12, -0.05)  # on the right arm's side
    world = FakeWorld({o.id: FakeObject(o.id, o.color or "", o.label, list(o.position_m))
                       for o in (toy, _basket(-0.1, 0.05))})
    world.objects["red_block"] = FakeObject("red_block", "red", "block", [0.3, -0.2, TABLE_Z + 0.1])
    world.held["right"] = "red_block"
    ctx = fake_context(world, perception=SeenFromAbove(world))
    ctx.wrist_views = {"left": _wrist(world, "left_wrist"), "right": _wrist(world, "right_wrist")}
    state = initial_state("put the toy in the basket")
    state["scene"] = SceneMemory(objects=[_basket(-0.1, 0.05)], initial=[toy, _basket(-0.1, 0.05)], scan_count=2)
    state["bindings"] = {"toy": "yellow_toy", "basket": "brown_basket"}
    state["stage_error"] = StageError(agent="grounder", message="not detected: yellow_toy", lost=True)
    scene = descriptor(state, Runtime(context=ctx))["scene"]
    looks = [c for c in world.calls if c[0] == "move_to_pose"]
    assert looks and all(arm == "left" for _, arm, _ in looks), "the right hand holds the block: the left one looks"
    assert looks[0][2][:2] == [0.12, -0.05], "above where the toy was last seen"
    assert world.calls[-1] == ("back_to_origin", "left", None), "and goes home after"
    found = scene.get("yellow_toy")
    assert found is not None and found.source == LOOKED_PREFIX + "left_wrist"
    assert world.held["right"] == "red_block", "the block stays held"


def _into_basket() -> Subtask:
    return Subtask(text="put the toy in the basket", action="place",
                   obj=ObjectRef(phrase="the toy", color="yellow", label="toy"),
                   target=ObjectRef(phrase="the basket", color="brown", label="basket"), relation="in")


def _plan_into(basket: SceneObject, holder: ArmSide | None, toy: SceneObject | None = None) -> list[tuple[str, str]]:
    toy = toy or _toy(0.1, 0.05)
    first = [_toy(0.1, 0.05), _basket(0.0, -0.05)]
    plan = RulesThinker().think(_into_basket(), {"yellow_toy": toy, "brown_basket": basket},
                                SceneMemory(objects=[toy, basket], initial=first), 0, None,
                                fake_context(_world(toy, basket, holder)), CallLog())
    return [(c.skill, c.arm) for c in plan.calls]


def test_a_basket_held_up_is_set_down_near_where_it_was_first_seen_before_anything_goes_in() -> None:
    basket = _basket(-0.05, -0.22, 0.1)
    toy, first = _toy(0.1, 0.05), [_toy(0.1, 0.05), _basket(0.0, -0.05)]
    plan = RulesThinker().think(_into_basket(), {"yellow_toy": toy, "brown_basket": basket},
                                SceneMemory(objects=[toy, basket], initial=first), 0, None,
                                fake_context(_world(toy, basket, "left")), CallLog())
    assert [(c.skill, c.arm, c.object) for c in plan.calls] == [("place_actor", "left", "brown_basket"),
                                                                 ("back_to_origin", "left", None)]
    down = plan.calls[0].target_pose
    assert down is not None and down[2] == TABLE_Z, "set down on the table"
    assert abs(down[0] - 0.0) <= 0.07 and abs(down[1] + 0.05) <= 0.07, "near where the basket was first seen"


def test_a_basket_held_resting_on_the_table_is_not_set_down_and_one_on_its_own_is_filled() -> None:
    resting = _plan_into(_basket(0.0, -0.05), "left")
    assert resting[0] != ("place_actor", "left") and ("back_to_origin", "left") not in resting[:2], \
        "a container held on the table (to receive something) stays held"
    assert any(s == "place_actor" for s, _ in resting)
    assert _plan_into(_basket(0.0, -0.05), None)[0][0] in ("grasp_actor", "upright_actor"), "the toy is taken first"


def test_a_basket_is_pushed_towards_the_reach_spot_not_away_from_the_toy_inside_it() -> None:
    basket = _basket(0.26, -0.02)
    inside = _toy(0.263, -0.017)  # 4 mm from the basket's centre: in it
    ux, uy = push_direction(basket, [inside], (-0.12, -0.05))
    assert ux < -0.9, f"pushed towards the left arm's reach, got ({ux:.2f}, {uy:.2f})"
    block = SceneObject(id="red_block", label="block", color="red", position_m=(0.26, -0.02, TABLE_Z + 0.02),
                        size_m=(0.04, 0.04, 0.04))
    ux, uy = push_direction(block, [_toy(0.26, -0.06)], (-0.12, -0.05))
    assert uy > 0.9, f"a block is still pushed away from a neighbour it leans on, got ({ux:.2f}, {uy:.2f})"


def test_a_look_outside_the_workspace_is_not_made() -> None:
    world = FakeWorld.blocks(("red", 0.1, 0.0))
    ctx = fake_context(world)
    ctx.wrist_views = {"left": _wrist(world, "left_wrist"), "right": _wrist(world, "right_wrist")}
    assert look_from_above(ctx, [(1.5, 0.0)]) == [], "beyond the plan-target box: nothing moves"
    assert world.calls == []
    pictures = look_from_above(ctx, [(0.1, 0.0)])
    assert [name for name, _ in pictures] == ["right_wrist"]
    assert [c[:2] for c in world.calls] == [("move_to_pose", "right"), ("back_to_origin", "right")]
