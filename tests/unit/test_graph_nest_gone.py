"""A bowl put in a bowl and no longer seen may lie hidden in it, but not when the container is gone too: a knock
that threw the nest apart (one bowl off the table, the other 30 cm away) undoes the earlier subtask instead of
being judged where it was put (stack_bowls_three 2900012 under medium faults reported success with a bowl on the
floor)."""

from __future__ import annotations

from dataclasses import dataclass

from mallvi.contracts.observation import Observation
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.nodes.reflector import undone
from mallvi.graph.schemas import ObjectRef, Plan, Predicate, SceneMemory, SceneObject, Subtask
from mallvi.graph.state import initial_state
from mallvi.perception.synthetic import SynthBox, head_camera, render
from tests.fixtures.graph_fakes import TABLE_Z, FakeObject, FakePerception, FakeWorld, fake_context

NEST = (-0.14, -0.11)  # where the first bowl was put in the second
BOWL_M = 0.17
W, H = 320, 180


@dataclass
class _Hides(FakePerception):
    """Bowls 5 cm tall; the objects in ``hide`` are not seen (off the table, or inside another)."""

    def scan(self, obs: Observation) -> list[SceneObject]:
        return [o.model_copy(update={"size_m": (BOWL_M, BOWL_M, 0.05)}) for o in super().scan(obs)
                if o.id not in self.hide]


def _bowl(name: str) -> ObjectRef:
    return ObjectRef(phrase="the bowl", label="bowl", instance=name, every=True)  # a member of "the three bowls"


def _world(bowl_2_xy: tuple[float, float]) -> FakeWorld:
    """Three bowls; subtasks 1 and 2 done (bowl in bowl_2, bowl_3 in bowl), the run at subtask 3."""
    world = FakeWorld({n: FakeObject(n, "white", "bowl", [x, y, TABLE_Z + 0.025], size=BOWL_M) for n, x, y in
                       (("bowl", 0.03, -0.18), ("bowl_2", *NEST), ("bowl_3", -0.22, 0.12))})
    first = [SceneObject(id=o.name, label=o.label, size_m=(BOWL_M, BOWL_M, 0.05),
                         position_m=(o.pos[0], o.pos[1], o.pos[2]), source="fake") for o in world.objects.values()]
    subtasks = [
        Subtask(text="put the bowl in the bowl", action="place", obj=_bowl("bowl"), target=_bowl("bowl_2"),
                relation="in", post=[Predicate(relation="in", args=["bowl@bowl", "bowl@bowl_2"])]),
        Subtask(text="put the bowl in the bowl", action="place", obj=_bowl("bowl_3"), target=_bowl("bowl"),
                relation="in", post=[Predicate(relation="in", args=["bowl@bowl_3", "bowl@bowl"])]),
        Subtask(text="lift nothing", action="pick", obj=_bowl("bowl_3")),
    ]
    state = dict(initial_state("stack the three bowls on top of each other"))
    state.update(plan=Plan(subtasks=subtasks), completed=[0, 1], subtask_index=2,
                 scene=SceneMemory(objects=first, initial=first),
                 placed_at={"0": [*NEST, TABLE_Z], "1": [0.12, 0.05, TABLE_Z]})
    world.objects["bowl"].pos = [0.0, -1.34, 0.03]  # on the floor, out of view
    world.objects["bowl_2"].pos = [bowl_2_xy[0], bowl_2_xy[1], TABLE_Z + 0.025]
    world.objects["bowl_3"].pos = [0.12, 0.05, TABLE_Z + 0.035]  # in bowl_2 now
    world.state = state  # type: ignore[attr-defined]
    return world


def _depth(world: FakeWorld, extra: list[SynthBox] | None = None) -> Observation:
    K, T = head_camera(W, H)
    boxes = [SynthBox(o.name, (o.pos[0], o.pos[1], o.pos[2]), (BOWL_M, BOWL_M, 0.05), "white")
             for o in world.objects.values() if o.pos[2] > TABLE_Z]
    return render([*boxes, *(extra or [])], K, T, W, H, table_z=TABLE_Z)


def test_a_nest_thrown_apart_undoes_the_subtask_that_made_it() -> None:
    world = _world((0.12, 0.05))
    ctx = fake_context(world, perception=_Hides(world, hide={"bowl"}))
    hit = undone(world.state, ctx, _depth(world), CallLog())  # type: ignore[attr-defined]
    assert hit is not None
    j, v = hit
    assert j == 0 and v.failure_category == "wrong_placement", v
    assert "neither bowl nor bowl_2 is where bowl was put in bowl_2" in v.explanation


def test_a_bowl_hidden_in_its_container_still_counts() -> None:
    world = _world(NEST)  # bowl_2 still stands where the bowl was put in it, the bowl inside, not seen
    world.objects["bowl"].pos = [*NEST, TABLE_Z + 0.03]
    world.objects["bowl_3"].pos = [0.12, 0.05, TABLE_Z + 0.025]
    ctx = fake_context(world, perception=_Hides(world, hide={"bowl"}))
    assert undone(world.state, ctx, _depth(world), CallLog()) is None  # type: ignore[attr-defined]


def test_a_nest_is_looked_for_where_the_bowl_went_in_not_where_its_container_was_first_seen() -> None:
    """The container was pushed about before the bowl went into it: its memory holds where it was first seen, where
    the table shows now; the nest stands where the bowl was put, so nothing is undone."""
    world = _world(NEST)
    world.objects["bowl"].pos = [*NEST, TABLE_Z + 0.03]
    world.objects["bowl_3"].pos = [0.12, 0.05, TABLE_Z + 0.025]
    stale = [o.model_copy(update={"position_m": (0.05, -0.25, TABLE_Z + 0.025)}) if o.id == "bowl_2" else o
             for o in world.state["scene"].objects]  # type: ignore[attr-defined]
    world.state["scene"] = world.state["scene"].model_copy(update={"objects": stale})  # type: ignore[attr-defined]
    ctx = fake_context(world, perception=_Hides(world, hide={"bowl"}))
    assert undone(world.state, ctx, _depth(world), CallLog()) is None  # type: ignore[attr-defined]


def test_an_arm_over_the_spot_is_not_the_table_seen_there() -> None:
    """Nothing detected at the nest's place, but something the scan does not report (an arm) stands between it and
    the camera: the nest may be behind it, so nothing is undone."""
    world = _world((0.12, 0.05))
    arm = SynthBox("arm", (NEST[0], NEST[1] - 0.05, TABLE_Z + 0.2), (0.08, 0.08, 0.3), "black")
    ctx = fake_context(world, perception=_Hides(world, hide={"bowl"}))
    assert undone(world.state, ctx, _depth(world, [arm]), CallLog()) is None  # type: ignore[attr-defined]
