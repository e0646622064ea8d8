"""Binding a plan's object references to the Descriptor's scene objects, before anything moves.

``expand_groups`` first turns references to groups ("the bottles", "stack the three bowls") into one subtask per
object the scene holds, and checks the counts the instruction states. An object that is not in the scene, an
ambiguous reference, a count that does not match or an impossible handover is a RefusalError.
"""

from __future__ import annotations

import math
from itertools import pairwise

from mallvi.graph.agent_errors import RefusalError
from mallvi.graph.plan_checks import final_goal
from mallvi.graph.refs import (
    ResolutionError,
    candidates_of,
    canonical_label,
    plan_refs,
    ranked_group,
    resolve,
)
from mallvi.graph.schemas import ArmHint, ObjectRef, Plan, Predicate, SceneMemory, SceneObject, Subtask
from mallvi.perception.query_words import CONTAINERS

#: where an arrangement or a stack is built when the instruction says "the centre of the table" (world x, y; m):
#: in front of the robot, where both arms reach (the workspace centre the Thinker lays slots out about)
WORK_CENTRE_XY_M = (0.0, -0.15)


def prepare_plan(plan: Plan, scene: SceneMemory) -> tuple[Plan, dict[str, str]]:
    """A new plan made ready for the scene: groups expanded, references bound (each reference then carries its
    scene object's id), open arms and handovers filled in."""
    plan = expand_groups(plan, scene)
    bindings = bind_plan(plan, scene)
    plan = complete_plan(plan, scene, bindings)
    return _stamped(plan, bindings), bindings


def _stamped(plan: Plan, bindings: dict[str, str]) -> Plan:
    """Every reference with the id of the scene object it was bound to (``ObjectRef.instance``; the reference's
    key does not change), so that agents find it by that id instead of resolving it again."""
    def stamp(r: ObjectRef) -> ObjectRef:
        return r if r.instance is not None or r.key() not in bindings else r.model_copy(
            update={"instance": bindings[r.key()]})

    return plan.model_copy(update={"subtasks": [s.model_copy(update={
        "obj": stamp(s.obj), "target": stamp(s.target) if s.target else None, "group": [stamp(r) for r in s.group]})
        for s in plan.subtasks]})


def _members(ref: ObjectRef, scene: SceneMemory) -> list[SceneObject]:
    """The scene objects a group reference stands for (all of its kind; a size-ranked group as ranking sees it)."""
    cands = candidates_of(scene.objects)
    want = canonical_label(ref.label)
    pool = [c for c in cands if want == "object" or canonical_label(c.label) == want]
    if ref.color:
        pool = [c for c in pool if (c.color or "").lower() == ref.color.lower()]
    if ref.count is not None and len(pool) > ref.count:
        try:  # more seen than stated: the ones alike in size (a die among blocks is not one of them)
            pool = ranked_group(ref.model_copy(update={"among": ref.count, "size": "largest"}), pool, cands)
        except ResolutionError as e:
            raise RefusalError(str(e)) from e
    if ref.count is not None and len(pool) != ref.count:
        raise RefusalError(f"the instruction speaks of {ref.count} {want}(s), but {len(pool)} are seen")
    if not pool:
        raise RefusalError(f"there is no {ref.phrase.strip()!r} in the scene")
    by_id = {o.id: o for o in scene.objects}
    return [by_id[c.name] for c in pool]


def _as_member(ref: ObjectRef, obj: SceneObject) -> ObjectRef:
    return ref.model_copy(update={"instance": obj.id, "color": ref.color or obj.color,
                                  "phrase": f"the {obj.label} ({obj.id})", "count": None})


def _check_counts(plan: Plan, scene: SceneMemory) -> None:
    """A count the instruction states for a single object ("if there is one bread") must match the scene."""
    cands = candidates_of(scene.objects)
    for ref in plan_refs(plan).values():
        if ref.count is None or ref.every:
            continue
        want = canonical_label(ref.label)
        n = sum(1 for c in cands if canonical_label(c.label) == want)
        if n != ref.count:
            raise RefusalError(f"the instruction applies if there is {ref.count} {want}, but {n} are seen")


def expand_groups(plan: Plan, scene: SceneMemory) -> Plan:
    """One subtask per member of each group reference; a collective stack becomes a chain, its base the member
    nearest the work centre (moved there first when the instruction says so)."""
    _check_counts(plan, scene)
    if not any(s.obj.every or (s.target is not None and s.target.every) for s in plan.subtasks):
        return plan
    out: list[Subtask] = []
    for s in plan.subtasks:
        if s.target is not None and s.target.every:
            raise RefusalError(f"cannot tell which of {s.target.phrase.strip()!r} is meant in {s.text!r}")
        if not s.obj.every:
            out.append(s)
            continue
        members = _members(s.obj, scene)
        if s.action == "stack" and s.target is None:
            out += _chain(s, members)
            continue
        goal_xy = _target_xy(s, scene)
        members.sort(key=lambda o: math.dist(o.position_m[:2], goal_xy) if goal_xy else o.position_m[0])
        group = [_as_member(s.obj, o) for o in members]
        spread = s.target is not None and s.relation in ("in", "on")  # each member gets its own spot there
        for i, (o, ref) in enumerate(zip(members, group, strict=True)):
            post = [p.model_copy(update={"args": [ref.key() if a == s.obj.key() else a for a in p.args]})
                    for p in s.post]
            out.append(s.model_copy(update={"obj": ref, "post": post, "text": f"{s.text} [{o.id}]",
                                            **({"slot": i, "group": group} if spread else {})}))
    subtasks = [t.model_copy(update={"index": i}) for i, t in enumerate(out)]
    return plan.model_copy(update={"subtasks": subtasks, "goal": final_goal(subtasks)})


def _target_xy(s: Subtask, scene: SceneMemory) -> tuple[float, float] | None:
    if s.target is None:
        return None
    try:
        c = resolve(s.target, candidates_of(scene.objects), allow_color_only=True)
    except ResolutionError:
        return None
    return (c.position_m[0], c.position_m[1])


def _chain(s: Subtask, members: list[SceneObject]) -> list[Subtask]:
    """"stack the blocks" / "stack the bowls on top of each other": the member nearest the work centre at the
    bottom, each next-nearest on the one before (nested, for containers)."""
    if len(members) < 2:
        raise RefusalError(f"stacking needs at least two objects: {s.text!r}")
    order = sorted(members, key=lambda o: math.dist(o.position_m[:2], WORK_CENTRE_XY_M))
    refs = [_as_member(s.obj, o) for o in order]
    # nested when the members are containers (bowls), stacked otherwise ("box" names a block, not a container)
    rel = "in" if canonical_label(s.obj.label) in CONTAINERS - {"box"} else "on"
    chain: list[Subtask] = []
    if s.relation == "center":
        chain.append(Subtask(text=f"{s.text} [{refs[0].phrase} to the centre]", action="place", obj=refs[0],
                             relation="center", arm_hint=s.arm_hint))
    for low, up in pairwise(refs):
        chain.append(Subtask(text=f"{s.text} [{up.phrase} {rel} {low.phrase}]", action="stack", obj=up, target=low,
                             relation=rel, arm_hint=s.arm_hint,  # type: ignore[arg-type]
                             post=[Predicate(relation=rel, args=[up.key(), low.key()])]))  # type: ignore[arg-type]
    return chain


def bind_plan(plan: Plan, scene: SceneMemory, previous: dict[str, str] | None = None) -> dict[str, str]:
    """Reference key -> scene object id for every reference of the plan.

    With ``previous`` bindings (a re-scan mid-run), a reference that no longer resolves keeps its old binding.
    """
    cands = candidates_of(scene.objects)
    bindings: dict[str, str] = {}
    problems: list[str] = []
    scene_ids = {o.id for o in scene.objects}
    refs = plan_refs(plan)
    generic = [k for k, r in refs.items() if canonical_label(r.label) == "object" and not r.color and not r.size
               and r.instance is None]
    for key, ref in [*((k, r) for k, r in refs.items() if k not in generic), *((k, refs[k]) for k in generic)]:
        if ref.instance is not None:  # a member of a group: bound when the group was expanded
            if ref.instance in scene_ids:
                bindings[key] = ref.instance
            elif previous and key in previous:
                bindings[key] = previous[key]
            else:
                problems.append(f"{ref.phrase!r} is no longer in the scene")
            continue
        try:
            taken = list(bindings.values()) if key in generic else []  # "the object": not one named otherwise
            bindings[key] = resolve(ref, cands, exclude=taken, allow_color_only=True).name
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
    """Fill in what needs the scene: "the other arm" (the arm opposite the one before it, which is then the
    side of that subtask's object), and the arms of a handover whose direction the instruction left open."""
    subtasks = []
    goal = list(plan.goal)
    plan = _hold_receivers(_resolve_other_arms(plan, scene, bindings))
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


def _hold_receivers(plan: Plan) -> Plan:
    """A container moved to the centre and then given something ("move skillet to center and ... put it into the
    skillet") is held there, off the table, to receive it."""
    receivers = {s.target.key() for s in plan.subtasks if s.relation == "in" and s.target is not None}
    return plan.model_copy(update={"subtasks": [
        s.model_copy(update={"hold": True}) if s.relation == "center" and s.obj.key() in receivers
        and canonical_label(s.obj.label) in {canonical_label(c) for c in CONTAINERS} else s
        for s in plan.subtasks]})


def _side(scene: SceneMemory, bindings: dict[str, str], ref: ObjectRef) -> ArmHint:
    obj = scene.get(bindings.get(ref.key(), ""))
    return "left" if obj is not None and obj.position_m[0] < 0 else "right"


def _resolve_other_arms(plan: Plan, scene: SceneMemory, bindings: dict[str, str]) -> Plan:
    """"use one arm to ..., then use the other arm to ...": the first arm is the side of its object, the other
    the opposite one."""
    subtasks = list(plan.subtasks)
    for i, s in enumerate(subtasks):
        if s.arm_hint != "other":
            continue
        if i == 0:
            raise RefusalError(f"'the other arm' follows no arm in {s.text!r}")
        prev = subtasks[i - 1]
        before: ArmHint = prev.arm_hint if prev.arm_hint in ("left", "right") else _side(scene, bindings, prev.obj)
        subtasks[i - 1] = prev.model_copy(update={"arm_hint": before})
        subtasks[i] = s.model_copy(update={"arm_hint": "right" if before == "left" else "left"})
    return plan.model_copy(update={"subtasks": subtasks})


__all__ = ["WORK_CENTRE_XY_M", "bind_plan", "complete_plan", "expand_groups", "prepare_plan"]
