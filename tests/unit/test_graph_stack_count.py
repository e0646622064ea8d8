"""After each link of a collective stack ("stack the three bowls on top of each other") the whole stack is
counted, whatever names a re-scan gave its alike members: a link's own check passed on two nests of one and two
bowls (the top bowl of a nest taken out and put into the third), and the run reported success."""

from __future__ import annotations

from mallvi.graph.schemas import ObjectRef, Plan, Predicate, SceneObject, Subtask
from mallvi.graph.stack_count import largest_stack, links_done, stack_short

TABLE_Z = 0.74


def _bowl(oid: str, x: float, y: float, z_up: float = 0.0) -> SceneObject:
    return SceneObject(id=oid, label="bowl", position_m=(x, y, TABLE_Z + 0.025 + z_up), size_m=(0.14, 0.14, 0.05))


def _member(oid: str) -> ObjectRef:
    return ObjectRef(phrase=f"the bowl ({oid})", label="bowl", every=True, instance=oid)


def _link(up: str, low: str) -> Subtask:
    return Subtask(text=f"stack the bowls [{up} in {low}]", action="stack", obj=_member(up), target=_member(low),
                   relation="in", post=[Predicate(relation="in", args=[_member(up).key(), _member(low).key()])])


PLAN = Plan(subtasks=[_link("bowl", "bowl_3"), _link("bowl_2", "bowl")])
ALL = [_bowl("bowl", 0.3, -0.06), _bowl("bowl_2", 0.24, 0.15), _bowl("bowl_3", -0.2, 0.0)]


def test_the_links_of_a_stack_are_counted_in_order() -> None:
    assert [links_done(PLAN, i) for i in range(2)] == [1, 2]
    pick = Subtask(text="pick the bowl", action="pick", obj=ObjectRef(phrase="the bowl", label="bowl"))
    assert links_done(Plan(subtasks=[pick]), 0) == 0


def test_two_nests_after_the_last_link_are_not_a_stack_of_three_whatever_the_names() -> None:
    # the nest of two at (0.02, 0.0) under the names the swapped re-scan gave, and one bowl alone
    two_nests = [_bowl("bowl", 0.02, 0.0), _bowl("bowl_2", 0.02, 0.0, 0.012), _bowl("bowl_3", -0.18, 0.0)]
    assert largest_stack(two_nests) == 2
    why = stack_short(PLAN, 1, two_nests, ALL)
    assert why is not None and "only 2 of the 3 bowls" in why and "3 should" in why
    one_stack = [_bowl("bowl", -0.18, 0.0, 0.012), _bowl("bowl_2", -0.175, 0.004, 0.024), _bowl("bowl_3", -0.18, 0.0)]
    assert stack_short(PLAN, 1, one_stack, ALL) is None
    assert stack_short(PLAN, 0, two_nests, ALL) is None, "after the first link a nest of two is all there is to be"


def test_nothing_is_concluded_when_a_member_is_not_seen_apart() -> None:
    nested_as_one = [_bowl("bowl", 0.02, 0.0), _bowl("bowl_3", -0.18, 0.0)]  # depth perception: a nest reads as one
    assert stack_short(PLAN, 1, nested_as_one, ALL) is None
