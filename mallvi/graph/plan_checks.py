"""Plan-level rules shared by the Decomposer backends: support-first ordering, the final goal, consistency."""

from __future__ import annotations

from mallvi.graph.agent_errors import RefusalError
from mallvi.graph.schemas import Predicate, Subtask


def supports_first(subtasks: list[Subtask]) -> list[Subtask]:
    """Reorder stacking so a support is placed before what goes on it ("A on B, and B on C" -> B on C first)."""
    out = list(subtasks)
    def support_key(s: Subtask) -> str | None:
        return s.target.key() if s.relation == "on" and s.target is not None else None

    for _ in range(len(out) ** 2):
        swap = next(((i, j) for i in range(len(out)) for j in range(i + 1, len(out))
                     if support_key(out[i]) is not None and out[j].obj.key() == support_key(out[i])
                     and out[j].action in ("place", "stack")), None)
        if swap is None:
            return out
        i, j = swap
        out.insert(i, out.pop(j))
    return subtasks  # circular: check_consistency refuses it with the reason


def final_goal(subtasks: list[Subtask]) -> list[Predicate]:
    """The predicates that must hold at the end: each object's last placement (earlier ones may be undone)."""
    last_by_obj: dict[str, list[Predicate]] = {}
    for s in subtasks:
        if s.action in ("pick",) and any(t.obj == s.obj and t.index > s.index for t in subtasks):
            continue
        last_by_obj[s.obj.key()] = list(s.post)
    goal: list[Predicate] = []
    for preds in last_by_obj.values():
        goal.extend(p for p in preds if p not in goal)
    return goal


def check_consistency(subtasks: list[Subtask], goal: list[Predicate]) -> None:
    """Refuse self-references and contradictory goals (A on B and B on A, A left of B and right of B)."""
    for s in subtasks:
        if s.target is not None and s.target.key() == s.obj.key() and s.relation != "at":
            raise RefusalError(f"impossible: {s.obj.phrase!r} cannot be placed relative to itself ({s.text!r})")
        if s.group and len({r.key() for r in s.group}) != len(s.group):
            raise RefusalError(f"impossible: an object appears twice in the arrangement {s.text!r}")
    above: dict[str, set[str]] = {}
    order: dict[str, set[str]] = {}
    for p in goal:
        if p.relation in ("on", "in"):
            above.setdefault(p.args[0], set()).add(p.args[1])
        elif p.relation in ("left_of", "right_of"):
            a, b = p.args if p.relation == "left_of" else (p.args[1], p.args[0])
            order.setdefault(a, set()).add(b)
    for graph, what in ((above, "on top of"), (order, "left of")):
        for start in graph:
            if _reaches(graph, start, start):
                raise RefusalError(f"impossible: {start} would have to be {what} itself (contradictory request)")
    supports = {k: v for k, v in above.items() if len(v) > 1}
    if supports:
        k, v = next(iter(supports.items()))
        raise RefusalError(f"impossible: {k} cannot rest on {' and '.join(sorted(v))} at once")


def _reaches(graph: dict[str, set[str]], node: str, target: str, seen: set[str] | None = None) -> bool:
    seen = seen if seen is not None else set()
    for nxt in graph.get(node, ()):
        if nxt == target:
            return True
        if nxt not in seen:
            seen.add(nxt)
            if _reaches(graph, nxt, target, seen):
                return True
    return False
