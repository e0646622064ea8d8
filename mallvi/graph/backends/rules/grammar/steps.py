"""Steps of a parsed instruction made into subtasks: a pick merged into what is then done with the object, a
turn merged with where the turned object is then put, and the base of a stack moved to the centre first."""

from __future__ import annotations

from mallvi.graph.schemas import Subtask

_MOVES = ("pick", "place", "stack", "move", "hang", "turn", "lift", "handover")


def merge_steps(subtasks: list[Subtask]) -> list[Subtask]:
    """"pick up X and put it on Y", "pick A and B and put them on C", "grasp X ... handover it": a pick is part of
    the next thing done with its object (which takes the pick's arm when it names none); "rotate X and put X down
    in the middle": one turn subtask ending there."""
    out = list(subtasks)
    i = 0
    while i < len(out):
        s = out[i]
        later = next((j for j in range(i + 1, len(out)) if out[j].obj.key() == s.obj.key()), None)
        if s.action == "pick" and later is not None and out[later].action in _MOVES:
            nxt = out[later]
            if nxt.arm_hint is None and s.arm_hint is not None:
                out[later] = nxt.model_copy(update={"arm_hint": s.arm_hint})
            out.pop(i)
            continue
        if (s.action == "turn" and s.relation is None and later == i + 1 and out[later].action in ("place", "move")
                and out[later].relation):
            nxt = out.pop(later)
            out[i] = s.model_copy(update={"relation": nxt.relation, "target": nxt.target, "post": nxt.post,
                                          "text": f"{s.text}, {nxt.text}"})
        i += 1
    return out


def base_to_centre(subtasks: list[Subtask]) -> list[Subtask]:
    """"move the blocks to the centre of the table, and stack ...": the stack's base goes to the centre first.

    A collective stack ("stack the blocks") is marked to do the same once its order is known."""
    if any(s.relation in ("slot", "center") for s in subtasks):
        return subtasks  # an arrangement is laid out about the centre already
    moved = {s.obj.key() for s in subtasks}
    bases = [s.target for s in subtasks if s.action == "stack" and s.relation == "on" and s.target is not None
             and s.target.key() not in moved]
    out = list(subtasks)
    if bases:
        base = bases[0]
        out.insert(0, Subtask(text=f"move {base.phrase} to the centre of the table", action="place", obj=base,
                              relation="center", arm_hint=subtasks[0].arm_hint))
    return _mark_collective(out)


def _mark_collective(subtasks: list[Subtask]) -> list[Subtask]:
    """A collective stack ("stack the blocks") asks for its base at the centre: ``relation`` "center"."""
    return [s.model_copy(update={"relation": "center"}) if s.action == "stack" and s.obj.every and s.target is None
            else s for s in subtasks]
