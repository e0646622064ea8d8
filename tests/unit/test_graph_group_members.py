"""A group's subtask ("put the cans into the box", one subtask per can) whose own object is in the target already
moves a member that is not: the one a hand holds, else the one on the table nearest the target.

The Reflector counts alike objects in the target, since a fresh look cannot tell them apart. When the count fell
short, the Thinker planned the subtask's own can again, the one already in the box: it took it out and put it back
(or, where the lowering had no inverse-kinematics solution, carried it home), and the can outside stayed out."""

from __future__ import annotations

from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.rules.thinker.members import member_out_of_place
from mallvi.graph.backends.rules.thinker.thinker import RulesThinker
from mallvi.graph.schemas import ObjectRef, SceneMemory, SceneObject, Subtask
from tests.fixtures.graph_fakes import TABLE_Z, FakeWorld, fake_context

BOX = SceneObject(id="plasticbox", label="plasticbox", position_m=(0.0, -0.18, TABLE_Z + 0.03),
                  size_m=(0.2, 0.14, 0.06), box_m=(0.2, 0.14, 0.06))
CAN = (0.066, 0.066, 0.12)


def _can(oid: str, x: float, y: float, bottom_z: float = TABLE_Z) -> SceneObject:
    return SceneObject(id=oid, label="can", position_m=(x, y, bottom_z + CAN[2] / 2), size_m=CAN, box_m=CAN)


def _member(oid: str, slot: int = 1, every: bool = True) -> Subtask:
    return Subtask(text=f"place cans into plasticbox [{oid}]", action="place", relation="in", slot=slot,
                   obj=ObjectRef(phrase=f"the can ({oid})", label="can", every=every, instance=oid),
                   target=ObjectRef(phrase="plasticbox", label="plasticbox", instance="plasticbox"))


def _choose(subtask: Subtask, *cans: SceneObject, held: str | None = None) -> str | None:
    localized = {o.id: o for o in (*cans, BOX)}
    m = member_out_of_place(subtask, localized[subtask.obj.instance or ""], BOX, localized, TABLE_Z,
                            held=lambda o: o.id == held)
    return None if m is None else m.id


def test_a_member_in_place_hands_the_subtask_to_one_outside() -> None:
    inside = _can("can", 0.04, -0.18, TABLE_Z + 0.005)
    out_near, out_far = _can("can_2", 0.18, -0.1), _can("can_3", -0.3, 0.05)
    assert _choose(_member("can"), inside, out_far, out_near) == "can_2"  # the nearer of the two outside
    assert _choose(_member("can"), inside, out_far, out_near, held="can_3") == "can_3"  # what a hand holds first


def test_the_subtask_keeps_its_own_object_where_moving_another_is_not_called_for() -> None:
    inside, out = _can("can", 0.04, -0.18, TABLE_Z + 0.005), _can("can_2", 0.18, -0.1)
    assert _choose(_member("can_2"), inside, out) is None  # its own object is out: it moves that one
    assert _choose(_member("can"), inside, _can("can_2", -0.04, -0.18, TABLE_Z + 0.005)) is None  # both in
    assert _choose(_member("can", every=False), inside, out) is None  # not one of a group
    perched = _can("can_2", -0.06, -0.18, TABLE_Z + 0.09)  # on the rim or on another can, over the box
    assert _choose(_member("can"), inside, perched) is None
    assert _choose(_member("can"), inside, perched, held="can_2") == "can_2"


def test_the_thinker_plans_the_member_outside_and_says_why() -> None:
    inside, out = _can("can", 0.04, -0.18, TABLE_Z + 0.005), _can("can_2", 0.18, -0.1)
    localized = {o.id: o for o in (inside, out, BOX)}
    ctx = fake_context(FakeWorld.blocks(("red", -0.3, 0.3)))
    plan = RulesThinker().think(_member("can"), localized, SceneMemory(objects=list(localized.values())), 1,
                                "1 of the 2 cans seen are in plasticbox (can); 2 should be", ctx, CallLog())
    moved = {c.object for c in plan.calls if c.skill in ("grasp_actor", "place_actor")}
    assert moved == {"can_2"}, plan.calls
    assert plan.rationale.startswith("can is in plasticbox already, can_2 is not")
