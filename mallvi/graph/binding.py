"""Binding a plan's object references to the Descriptor's scene objects, before anything moves.

An object that is not in the scene, an ambiguous reference or an impossible handover is a RefusalError.
"""

from __future__ import annotations

from mallvi.graph.agent_errors import RefusalError
from mallvi.graph.refs import ResolutionError, candidates_of, plan_refs, resolve
from mallvi.graph.schemas import Plan, Predicate, SceneMemory


def bind_plan(plan: Plan, scene: SceneMemory, previous: dict[str, str] | None = None) -> dict[str, str]:
    """Reference key -> scene object id for every reference of the plan.

    With ``previous`` bindings (a re-scan mid-run), a reference that no longer resolves keeps its old binding.
    """
    cands = candidates_of(scene.objects)
    bindings: dict[str, str] = {}
    problems: list[str] = []
    for key, ref in plan_refs(plan).items():
        try:
            bindings[key] = resolve(ref, cands, allow_color_only=True).name
        except ResolutionError as e:
            if previous and key in previous:
                bindings[key] = previous[key]
            else:
                problems.append(str(e))
    if problems:
        raise RefusalError("; ".join(problems))
    for s in plan.subtasks:
        ids = [bindings[r.key()] for r in ([s.obj] + ([s.target] if s.target and s.relation != "at" else []))]
        if len(ids) == 2 and ids[0] == ids[1]:
            raise RefusalError(f"impossible: {s.obj.phrase!r} and {s.target.phrase if s.target else ''!r} are the "
                               f"same object ({ids[0]})")
    return bindings


def complete_plan(plan: Plan, scene: SceneMemory, bindings: dict[str, str]) -> Plan:
    """Fill in what needs the scene: the arms of a handover whose direction the instruction left open."""
    subtasks = []
    goal = list(plan.goal)
    for s in plan.subtasks:
        if s.action == "handover" and not any(p.relation == "held_by" for p in s.post):
            obj = scene.get(bindings[s.obj.key()])
            giver = s.arm_hint if s.arm_hint in ("left", "right") else ("left" if obj and obj.position_m[0] < 0
                                                                        else "right")
            receiver = "right" if giver == "left" else "left"
            pred = Predicate(relation="held_by", args=[s.obj.key(), receiver])
            s = s.model_copy(update={"arm_hint": giver, "post": [*s.post, pred]})
            goal.append(pred)
        subtasks.append(s)
    return plan.model_copy(update={"subtasks": subtasks, "goal": goal})
