"""Reflector node: judge the attempt from a fresh observation, then decide where the graph goes next.

Success moves on to the next subtask. A failure is remembered (graph/failure_memory.py) and goes back to the agent
the verdict blames; every ``rescan_after_failures`` failures the Descriptor re-scans first (once per subtask by
default). When the Thinker has no strategy left that differs from the failed ones, the Descriptor re-scans once;
if that changes nothing, or when the subtask's or the run's budget is spent, the run ends with a failure report. So
does an object lost from view (not in the scene, or not detected by any camera) that the re-scan made at once after
it does not find again.
"""

from __future__ import annotations

import math
from typing import Any

from langgraph.runtime import Runtime

from mallvi.config import Budgets
from mallvi.contracts.observation import Observation
from mallvi.graph.agent_errors import AgentError
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.context import GraphContext
from mallvi.graph.failure_memory import (
    RESCAN,
    FailedAttempt,
    geometry_failures,
    lost_again,
    record,
    rescanned_last,
)
from mallvi.graph.nodes.common import current_subtask
from mallvi.graph.posture import lies_on_side
from mallvi.graph.scene_memory import nested_after, settled
from mallvi.graph.schemas import (
    RETRYABLE_AGENTS,
    ActorReport,
    CommandRecord,
    FailureReport,
    SceneObject,
    Verdict,
)
from mallvi.graph.stack_count import stack_short
from mallvi.graph.state import GraphState


def judge(state: GraphState, ctx: GraphContext, log: CallLog) -> tuple[Verdict, list[str], Observation | None]:
    err = state["stage_error"]
    if err is not None:
        return Verdict(verdict="failure", failure_category=f"{err.agent}_failed", blamed_agent=err.agent,
                       explanation=err.message), [], None
    report = state["actor_report"] or ActorReport(ok=False, message="the actor did not run")
    obs = ctx.observe()
    image_id = ctx.artifacts.put("reflector", obs.rgb, node="reflector")
    try:
        v = ctx.backends.reflector.reflect(current_subtask(state), report, state["localized"], obs, ctx, log)
    except AgentError as e:
        v = Verdict(verdict="failure", failure_category="reflector_failed", blamed_agent="thinker",
                    explanation=f"no usable verdict: {e}")
    if v.verdict == "success" and not report.ok and not report.only_retreat_failed():
        # a failed or refused step is never taken as done; an arm that did not get home or rise clear after the
        # work is left to the verdict (the scene shows whether the work was done)
        v = Verdict(verdict="failure", failure_category="execution_failed",
                    blamed_agent=report.failed_stage or "actor",
                    explanation=f"{report.message} (the Reflector's success verdict overruled)")
    # the failed call comes from the Actor's report, never from a backend's answer: the Thinker routes on its kind
    v = v.model_copy(update={"failed_step": report.failed_step if v.verdict == "failure" and not report.ok else None})
    if v.verdict == "success":
        fresh = ctx.perception.scan(obs)
        plan, scene = state["plan"], state["scene"]
        # a tall object put down lying on its side is not placed as asked; nor is a stack whose alike members'
        # names a re-scan swapped, when it is shorter than its links make it
        why = toppled(state, fresh) or (None if plan is None or scene is None else stack_short(
            plan, state["subtask_index"], fresh, scene.objects))
        if why is not None:
            v = Verdict(verdict="failure", failure_category="wrong_placement", blamed_agent="thinker",
                        explanation=f"{why} (the Reflector's success verdict overruled)")
    return v, [image_id], obs


def toppled(state: GraphState, fresh: list[SceneObject]) -> str | None:
    """Why the subtask's moved object counts as toppled (``posture.lies_on_side``), or None."""
    subtask = current_subtask(state)
    scene = state["scene"]
    oid = state["bindings"].get(subtask.obj.key())
    if subtask.action not in ("place", "stack", "move") or scene is None or oid is None:
        return None
    first = next((o for o in scene.initial if o.id == oid), None)
    if first is None or first.color is None:
        return None
    same_colour = [o for o in fresh if o.color == first.color]
    if len(same_colour) != 1 or not lies_on_side(same_colour[0], first):
        return None
    now = same_colour[0]
    return (f"{subtask.obj.phrase} lies on its side: {now.size_m[2]:.2f} m tall, {first.size_m[2]:.2f} m when first "
            "seen")


def decide(state: GraphState, ctx: GraphContext, v: Verdict, attempt_ran: bool = True) -> dict[str, Any]:
    """State update for a verdict, including ``retry_from`` (the next node), budgets and the failure memory.

    ``attempt_ran``: the verdict judges the attempt in the state (False for an earlier subtask found undone).
    """
    idx = state["subtask_index"]
    key = str(idx)
    history = [*state["history"], v]
    if v.verdict == "success":
        return {"reflection": v, "history": [], "subtask_index": idx + 1, "completed": [idx],
                "retry_from": "dispatch", "stage_error": None}
    b = ctx.budgets
    attempts = {**state["attempts"], key: state["attempts"].get(key, 0) + 1}
    total = state["total_attempts"] + 1
    update: dict[str, Any] = {"reflection": v, "history": history, "attempts": attempts, "total_attempts": total}
    err = state["stage_error"] if attempt_ran else None
    memory = list(state["failures"].get(key, []))
    no_strategy = err is not None and err.no_strategy
    lost = err is not None and err.lost  # an object the subtask needs is in neither the scene nor any camera
    looked_again = rescanned_last(memory)  # a re-scan already followed the last failed attempt
    if err is not None and no_strategy and not looked_again:
        memory.append(FailedAttempt(strategy=RESCAN, kind="no_strategy", explanation=err.message[:300]))
    elif not no_strategy:
        memory.append(record(state["action_plan"] if attempt_ran else None, state["localized"],
                             state["actor_report"] if attempt_ran else None, err, v))
    update["failures"] = {**state["failures"], key: memory}
    rescans = state["rescans"].get(key, 0)
    plan = state["plan"]
    text = plan.subtasks[idx].text if plan and idx < len(plan.subtasks) else None
    tried = [m.line() for m in memory if m.strategy != RESCAN]
    if no_strategy and looked_again:  # re-scanned already and still nothing new to try
        update.update(status="failed", retry_from="end", failure_report=FailureReport(
            subtask_index=idx, subtask=text, attempts=attempts[key], history=history, tried=tried,
            reason=f"no different strategy remains after {attempts[key]} attempts (a re-scan found nothing new): "
                   f"{v.explanation}"))
    elif lost and lost_again(memory):  # the re-scan (and the second camera) did not find it either
        update.update(status="failed", retry_from="end", failure_report=FailureReport(
            subtask_index=idx, subtask=text, attempts=attempts[key], history=history, tried=tried,
            reason=f"object lost from view after {attempts[key]} attempts (a re-scan and the second camera did "
                   f"not find it again): {v.explanation}"))
    elif no_strategy:
        update["retry_from"] = "descriptor"  # the last strategy: look again, then plan from what is seen
    elif (why := budget_spent(b, attempts[key], total, memory, update["failures"])) is not None:
        update.update(status="failed", retry_from="end", failure_report=FailureReport(
            subtask_index=idx, subtask=text, attempts=attempts[key], history=history, tried=tried,
            reason=f"{why}; last: {v.explanation}"))
    elif lost:
        update["retry_from"] = "descriptor"  # look again at once, through the second camera too
    elif attempts[key] % b.rescan_after_failures == 0 and rescans < b.max_rescans_per_subtask:
        update["retry_from"] = "descriptor"
    else:
        blamed = v.blamed_agent if v.blamed_agent in RETRYABLE_AGENTS else "thinker"
        update["retry_from"] = blamed
    return update


def budget_spent(b: Budgets, attempts: int, total: int, memory: list[FailedAttempt],
                 failures: dict[str, list[FailedAttempt]]) -> str | None:
    """Which budget the failed attempts have spent, said with the attempts made and how many of them were failures
    of geometry (which spend nothing, up to the caps), or None."""
    geometry = geometry_failures(memory)
    geometry_total = sum(geometry_failures(m) for m in failures.values())
    if attempts - geometry >= b.max_attempts_per_subtask or attempts >= b.attempt_cap_per_subtask:
        why, n, free = "subtask budget", attempts, geometry
    elif total - geometry_total >= b.max_total_attempts or total >= b.attempt_cap_total:
        why, n, free = "run budget", total, geometry_total
    else:
        return None
    note = f" ({free} of them found no inverse-kinematics solution, path or allowed arm and spent none of it)"
    return f"{why} exhausted after {n} attempts{note if free else ''}"


UNDO_CATEGORIES = ("wrong_placement", "grasp_failed")


def _place_target(report: ActorReport | None) -> tuple[float, float, float] | None:
    """Where a successful attempt put its object (``ActorReport.put_at``), recorded as ``placed_at``."""
    return report.put_at() if report is not None and report.ok else None


PARTIAL_HEIGHT_RATIO = 0.5  # an object seen less than half as tall as at first was seen in part


def last_known(state: GraphState) -> dict[str, SceneObject]:
    """Every object where it was last known: the scene memory, moved to where each finished subtask put its
    object (without the object's old points; with its first size where it was seen in part since), then this
    subtask's localised objects. An earlier subtask's object now hidden under a later one (the lowest of three
    bowls) is re-checked from there."""
    scene, plan = state["scene"], state["plan"]
    known = {o.id: o for o in scene.objects} if scene is not None else {}
    first = {o.id: o for o in scene.initial} if scene is not None else {}
    for j in sorted(set(state["completed"])):
        target = state.get("placed_at", {}).get(str(j))
        oid = plan.subtasks[j].obj.instance if plan is not None and j < len(plan.subtasks) else None
        if target is not None and oid is not None and oid in known:
            o = known[oid]
            size = o.size_m
            if oid in first and size[2] < PARTIAL_HEIGHT_RATIO * first[oid].size_m[2]:
                size = first[oid].size_m  # seen in part since (cut by the image's edge): its first whole size
            known[oid] = o.model_copy(update={"position_m": (target[0], target[1], target[2] + size[2] / 2),
                                              "size_m": size, "points": {}})
    known.update(state["localized"])
    return known


def undone(state: GraphState, ctx: GraphContext, obs: Observation, log: CallLog) -> tuple[int, Verdict] | None:
    """The first earlier subtask whose placement no longer holds in ``obs`` (e.g. a block knocked off the stack).

    Checked geometrically (the rules Reflector on the fresh view, no model call) for subtasks that put an object
    somewhere; an object that is merely hidden now is not taken as undone.
    """
    from mallvi.graph.backends.rules.reflector import RulesReflector

    plan = state["plan"]
    idx = state["subtask_index"]
    done = sorted(set(state["completed"]))
    if plan is None:
        return None
    known = last_known(state)  # the same for every subtask re-checked
    for j in done:
        if j >= idx or j >= len(plan.subtasks):
            continue
        sub = plan.subtasks[j]
        target = state.get("placed_at", {}).get(str(j))
        spatial = any(p.relation not in ("lifted", "held_by") for p in sub.post)
        if sub.action == "pick" or not (spatial or target or sub.hold or sub.action == "lift"):
            continue
        # what is in or on a container or support moves with it (a toy in the basket lifted later): its relation
        # still holds then, so only another move of the object itself, or of any other target, skips the re-check
        carries = sub.relation in ("in", "on")
        own = {sub.obj.key()} | ({sub.target.key()} if sub.target and not carries else set())
        if any(plan.subtasks[k].obj.key() in own for k in range(j + 1, min(idx, len(plan.subtasks) - 1) + 1)):
            continue  # the plan itself moved one of its objects again later on
        commands = [CommandRecord(skill="place_actor", arm="left", args={"target_pose": target}, ok=True,
                                  message="re-check")] if target else []
        v = RulesReflector().reflect(sub, ActorReport(ok=True, message="re-check", commands=commands),
                                     known, obs, ctx, log)
        if v.verdict == "failure" and v.failure_category == "object_lost" and target:
            gone = _container_gone if sub.relation == "in" else _gone_from_spot
            v = gone(state, ctx, obs, j, target, known) or v
        if v.verdict == "failure" and v.failure_category in UNDO_CATEGORIES:
            return j, v.model_copy(update={"explanation": f"subtask {j + 1} was undone: {v.explanation}"})
    return None


def _gone_from_spot(state: GraphState, ctx: GraphContext, obs: Observation, j: int, target: list[float],
                    known: dict[str, SceneObject]) -> Verdict | None:
    """A wrong-placement verdict for subtask ``j``'s object, not seen now, when another object stands where it was
    put (``rules.reflector.taken_spot``; its size from when it was first seen) or the camera sees past its place
    (``seen_empty``: a burger knocked off the tray), else None: hidden only where nothing contradicts it (a base
    under the blocks stacked on it)."""
    from mallvi.graph.backends.rules.reflector import seen_empty, taken_spot

    plan, scene = state["plan"], state["scene"]
    assert plan is not None
    sub = plan.subtasks[j]
    oid = sub.obj.instance
    first = next((o for o in scene.initial if o.id == oid), None) if scene is not None else None
    shape = first or known.get(oid or "")
    if oid is None or shape is None:
        return None
    skip = {sub.target.instance} if sub.target is not None and sub.target.instance else set()
    spot = (target[0], target[1], target[2])
    why = taken_spot(oid, spot, shape.size_m, ctx.perception.scan(obs), skip)
    if why is None and seen_empty(obs, spot, shape.size_m[2]):
        why = f"{oid} is not where it was put: the camera sees past its place"
    if why is None:
        return None
    return Verdict(verdict="failure", failure_category="wrong_placement", blamed_agent="thinker", explanation=why)


def _container_gone(state: GraphState, ctx: GraphContext, obs: Observation, j: int, target: list[float],
                    known: dict[str, SceneObject]) -> Verdict | None:
    """A wrong-placement verdict for subtask ``j``, which put its object (not seen now) in a container at
    ``target``, when the container is not there either: no object is seen within its half-width of that spot and
    the camera sees the table there (a nest of bowls thrown off the table). Else None: the object may lie hidden
    in it. The spot is where the object went in, not the container's remembered place (a container pushed about
    before it received the object is remembered where it was first seen)."""
    from mallvi.graph.backends.rules.reflector import sees_table_at

    plan = state["plan"]
    assert plan is not None
    sub = plan.subtasks[j]
    cid = sub.target.instance if sub.target is not None else None
    container = known.get(cid or "")
    if cid is None or container is None:
        return None
    xy = (target[0], target[1])
    radius = max(container.size_m[0], container.size_m[1]) / 2
    if any(math.dist(o.position_m[:2], xy) < radius for o in ctx.perception.scan(obs)):
        return None
    if not sees_table_at(obs, xy, ctx.table_top_z):
        return None
    return Verdict(verdict="failure", failure_category="wrong_placement", blamed_agent="thinker",
                   explanation=f"neither {sub.obj.instance} nor {cid} is where {sub.obj.instance} was put in {cid}: "
                               "nothing is seen there and the camera sees the table")


def _may_reopen(v: Verdict, update: dict[str, Any]) -> bool:
    """Whether to look for an earlier subtask undone: after a success, and after an attempt that put its object
    down in the wrong place (the hands are empty then) while the run goes on. An earlier placement a miss or a
    fault knocked away can make the current subtask's own check fail for good (a row whose middle block was thrown
    aside), so it is put right first."""
    if v.verdict == "success":
        return True
    return v.failure_category == "wrong_placement" and update.get("retry_from") != "end"


def reflector(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    ctx = runtime.context
    log = CallLog()
    v, images, obs = judge(state, ctx, log)
    update = decide(state, ctx, v)
    target = _place_target(state["actor_report"])
    if v.verdict == "success" and target is not None:
        update["placed_at"] = {**state.get("placed_at", {}), str(state["subtask_index"]): list(target)}
    if v.verdict == "success" and obs is not None:
        # what was moved is looked for where it is now (two alike bowls: the next subtask's Grounder takes the
        # detection nearest the last known position)
        fresh = ctx.perception.scan(obs)
        update["localized"] = settled(state["localized"], fresh, current_subtask(state), target)
        nested = nested_after(state["localized"], fresh, current_subtask(state), target)
        if nested is not None and state["scene"] is not None:
            # put in one of its own kind, it is seen as one with it: remembered there, not looked for apart
            update["localized"][nested.id] = nested
            objects = [nested if o.id == nested.id else o for o in state["scene"].objects]
            update["scene"] = state["scene"].model_copy(update={"objects": objects})
    if obs is not None and _may_reopen(v, update) and (hit := undone(state, ctx, obs, log)) is not None:
        j, why = hit
        back: GraphState = {**state, "subtask_index": j}
        if v.verdict != "success":  # the failed attempt stays counted (and remembered) against its own subtask
            back["attempts"] = update["attempts"]
            back["total_attempts"] = update["total_attempts"]
            back["failures"] = update["failures"]
        update = {**decide(back, ctx, why, attempt_ran=False), "subtask_index": j,
                  "completed": [state["subtask_index"]] if v.verdict == "success" else []}
        if update.get("retry_from") not in ("end", "descriptor"):
            update["retry_from"] = "perceptor"  # re-perceive and re-plan the undone subtask
    if obs is not None and update.get("retry_from") in ("thinker", "actor"):
        # the memory the retry works from is updated to what the Reflector just saw (objects may have moved)
        update["localized"] = settled(state["localized"], ctx.perception.scan(obs), current_subtask(state), target)
    update.update(llm_calls=log.records, image_ids=images)
    return update


def advance(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """The no-reflector ablation: no check, no retry; the attempt is assumed done and the run moves on."""
    idx = state["subtask_index"]
    report = state["actor_report"]
    err = state["stage_error"]
    ok = err is None and report is not None and report.ok
    why = err.message if err else (report.message if report else "the actor did not run")
    v = Verdict(verdict="success" if ok else "failure", explanation="assumed (no reflector)" if ok else why,
                failure_category=None if ok else "unverified", blamed_agent=None,
                failed_step=None if ok or report is None else report.failed_step)
    return {"reflection": v, "history": [*state["history"], v] if not ok else state["history"],
            "subtask_index": idx + 1, "completed": [idx] if ok else [], "retry_from": "dispatch",
            "stage_error": None}
