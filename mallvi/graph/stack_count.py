"""How many alike objects stand in one stack: the whole-stack check after each link of a collective stack.

"Stack the three bowls on top of each other" becomes a chain of links, each putting one member into or onto the
one before (``binding._chain``). A link's own check names its two members, but alike objects cannot be told apart
by a fresh look, and a re-scan may swap their names: the graph then took the top bowl out of a nest of two and put
it into the third, its link's check held, and the run reported success with two stacks. After the k-th link of a
chain (k from 1) at least k + 1 of its kind must stand in one stack, whatever their names: objects whose centres lie
within half the wider one's footprint of each other. The count is only made when the fresh scan sees every member
the scene memory knows apart (two nested bowls read as one to depth perception: nothing is concluded then).
"""

from __future__ import annotations

import math

from mallvi.graph.refs import canonical_label
from mallvi.graph.schemas import Plan, SceneObject, Subtask


def _link(s: Subtask) -> bool:
    """Whether ``s`` is a link of a collective stack: one member into or onto another of the same kind."""
    return (s.action == "stack" and s.relation in ("in", "on") and s.obj.every and s.target is not None
            and s.target.every and canonical_label(s.obj.label) == canonical_label(s.target.label))


def links_done(plan: Plan, index: int) -> int:
    """How many links of the chain the subtask at ``index`` belongs to end with it (0: not a link)."""
    if index >= len(plan.subtasks) or not _link(plan.subtasks[index]):
        return 0
    kind = canonical_label(plan.subtasks[index].obj.label)
    return sum(1 for s in plan.subtasks[: index + 1] if _link(s) and canonical_label(s.obj.label) == kind)


def _together(a: SceneObject, b: SceneObject) -> bool:
    reach = max(a.size_m[0], a.size_m[1], b.size_m[0], b.size_m[1]) / 2
    return math.dist(a.position_m[:2], b.position_m[:2]) <= reach


def largest_stack(objects: list[SceneObject]) -> int:
    """The most objects of ``objects`` that stand together with one of them (centres within half the wider
    footprint)."""
    return max((sum(1 for p in objects if _together(o, p)) for o in objects), default=0)


def stack_short(plan: Plan, index: int, fresh: list[SceneObject], known: list[SceneObject]) -> str | None:
    """Why the stack after link ``index`` is not as tall as the links so far make it, or None (not a link, the
    stack holds, or a member the scene memory knows is not seen apart in ``fresh``)."""
    done = links_done(plan, index)
    if done == 0:
        return None
    kind = canonical_label(plan.subtasks[index].obj.label)
    seen = [o for o in fresh if canonical_label(o.label) == kind]
    members = [o for o in known if canonical_label(o.label) == kind]
    if len(seen) < len(members):
        return None
    tallest = largest_stack(seen)
    if tallest >= done + 1:
        return None
    return (f"only {tallest} of the {len(seen)} {kind}s seen stand in one stack; {done + 1} should after "
            f"{done} of the stack's links")
