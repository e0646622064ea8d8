"""Actor node: run the Thinker's skill calls through the SkillAPI, stopping at the first failure.

A perceived object is mapped to the robot-side name (simulator name, or scene-graph name on a rig) whose box lies
nearest its 3D centre: within ``ctx.match_radius_m`` of that object's centre, or on the object (within
``ON_OBJECT_M`` of its box: the centre of a tall object's visible part lies on it, though far from its centre).
A perception error therefore surfaces as a failure here.
Before the first call runs, every argument of every call is checked (``plan_argument_problem``: the skills'
declared signatures, through ``robot_drivers.safety.skill_args.check_plan``) and every target of the plan
(``plan_motion.plan_violation``); a plan that fails either is refused whole and nothing moves.
A failed skill is blamed on an agent by its ``FailureKind`` (``BLAME_BY_KIND``), never by its message's words.
An object the plan uses without grasping it first, while the arm's gripper senses something between its fingers,
is in that gripper: the fingers hide part of it, so its centre is matched within ``HELD_MATCH_RADIUS_M`` instead.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime

from mallvi.contracts.geometry import ARM_SIDES
from mallvi.contracts.skills import Failure, FailureKind, SkillResult
from mallvi.contracts.world_model import WorldModel
from mallvi.graph.context import GraphContext
from mallvi.graph.goals import box_distance_m, centre_of
from mallvi.graph.plan_motion import plan_violation
from mallvi.graph.schemas import ActionPlan, ActorReport, AgentName, CommandRecord, FailedStep, SceneObject, SkillCall
from mallvi.graph.state import GraphState
from mallvi.robot_drivers.safety.skill_args import check_plan, skill_signatures

log = logging.getLogger(__name__)

HELD_MATCH_RADIUS_M = 0.08
"""Match radius for an object already in the gripper of the arm that uses it (partly hidden by the fingers)."""
ON_OBJECT_M = 0.01
"""A perceived centre this close to an object's box lies on that object."""
GRASP_SKILLS = ("grasp_actor", "upright_actor")
#: failures after which a call's alternatives are tried: its motion could not be planned, nothing moved
RETRY_KINDS = (FailureKind.NO_PLAN, FailureKind.UNREACHABLE, FailureKind.REFUSED_BY_GUARD)
#: failures after which an arm holding an object keeps it (the object is still in hand, only a motion was refused)
KEEP_HOLD_KINDS = (*RETRY_KINDS, FailureKind.WRONG_ARM)


def _match_key(info_name: str, world: WorldModel, where: tuple[float, float, float]) -> tuple[float, float, str]:
    info = world.get_object(info_name)
    return (round(box_distance_m(info, where), 3), math.dist(centre_of(info), where), info_name)


def match_object(obj: SceneObject, world: WorldModel | None, radius_m: float,
                 others: Sequence[SceneObject] = ()) -> tuple[str | None, str]:
    """The world-model name whose box lies nearest a perceived object's centre (ties: the nearer centre), if the
    perceived centre is within ``radius_m`` of its centre or within ``ON_OBJECT_M`` of its box; else (None, why).
    A name that is the nearest of another perceived object in ``others``, nearer to it than to ``obj``, is that
    object's: a bottle lying in a bin, its centre inside the bin's box, is not bound to the bin the graph sees too."""
    if world is None:
        return obj.id, "no world model: the perceived id is used"
    names = list(world.object_names())
    claimed: set[str] = set()
    for other in others:
        if other.id == obj.id or not names:
            continue
        theirs = min(_match_key(n, world, other.position_m) for n in names)
        if theirs[:2] < _match_key(theirs[2], world, obj.position_m)[:2]:
            claimed.add(theirs[2])
    best: tuple[float, float, str] | None = None
    for name in names:
        if name in claimed:
            continue
        key = _match_key(name, world, obj.position_m)
        if best is None or key < best:
            best = key
    if best is None or (best[1] > radius_m and best[0] > ON_OBJECT_M):
        where = ", ".join(f"{v:.3f}" for v in obj.position_m)
        near = f"; nearest is {best[2]} at {best[1] * 100:.1f} cm" if best else ""
        return None, f"no object within {radius_m * 100:.0f} cm of perceived {obj.id} at ({where}){near}"
    return best[2], f"{obj.id} -> {best[2]} ({best[1] * 100:.1f} cm from its centre)"


def held_by_plan_arm(calls: list[SkillCall], obj_key: str, ctx: GraphContext) -> bool:
    """Whether the plan's first call on ``obj_key`` is not a grasp and that call's arm senses a held object."""
    first = next((c for c in calls if c.object == obj_key), None)
    if first is None or first.skill in GRASP_SKILLS or ctx.gripper_holding is None:
        return False
    try:
        return bool(ctx.gripper_holding(first.arm))
    except Exception as e:  # a sensor fault leaves the normal radius
        log.warning("gripper sensor of the %s arm failed: %s", first.arm, e)
        return False


#: the skill parameters a call gives through its own fields (``object``, ``arm``, ``target_pose``), never in ``args``
CALL_FIELDS = {"actor": "object", "arm_tag": "arm", "target_pose": "target_pose", "action": "target_pose"}


def skill_kwargs(call: SkillCall, name: str | None) -> dict[str, Any]:
    """The keyword arguments ``call`` runs its skill with: its ``args`` (None values dropped), its arm as
    ``arm_tag``, and its object (``name``: the robot's name for it) as ``actor`` and its ``target_pose`` (as
    ``action`` for ``execute_ee_action``'s 16 numbers) where the skill declares them. A call's arm, object or target
    the skill does not take is left out (the object may just say what the call is about; ``execute_ee_action``
    moves both arms); a field written into ``args`` stays there, and the plan check refuses it."""
    params = skill_signatures().get(call.skill, {})
    kwargs: dict[str, Any] = {k: v for k, v in call.args.items() if v is not None}
    clashing = sorted(k for k in CALL_FIELDS if k in kwargs)
    if clashing:  # renamed so the check names it: a model's args must not override the call's own fields
        for k in clashing:
            kwargs[f"args.{k}"] = kwargs.pop(k)
    if "arm_tag" in params or not params:
        kwargs["arm_tag"] = call.arm
    if call.object is not None and "actor" in params:
        kwargs["actor"] = name if name is not None else call.object
    if call.target_pose is not None:
        for field in ("target_pose", "action"):
            if field in params:
                kwargs[field] = list(call.target_pose)
    return kwargs


def every_call(plan: ActionPlan) -> list[tuple[str, SkillCall]]:
    """Every call ``plan`` may run, each with how to name it: its calls, their alternatives, its fallbacks'."""
    out: list[tuple[str, SkillCall]] = []
    for f, seq in enumerate((plan.calls, *plan.fallbacks)):
        where = f"fallback {f}, " if f else ""
        for i, call in enumerate(seq):
            out.append((f"{where}call {i + 1} of {len(seq)}", call))
            out += [(f"{where}call {i + 1} of {len(seq)}, alternative {k + 1}", call.variant(v))
                    for k, v in enumerate(call.alternatives)]
    return out


def plan_argument_problem(calls: list[SkillCall], names: dict[str, str],
                          world: WorldModel | None) -> tuple[int, Failure] | None:
    """The first call with a malformed argument (unknown skill or keyword, missing or malformed value, an object
    the world does not know) and why, checked for every call before the first runs; None when all are sound."""
    objects = set(world.object_names()) if world is not None else None
    return check_plan([(c.skill, skill_kwargs(c, names.get(c.object) if c.object else None)) for c in calls],
                      objects)


def _call_skill(ctx: GraphContext, call: SkillCall, name: str | None) -> SkillResult:
    result: SkillResult = getattr(ctx.skills, call.skill)(**skill_kwargs(call, name))
    return result


BLAME_BY_KIND: dict[FailureKind, AgentName] = {
    FailureKind.REFUSED_BY_GUARD: "thinker",  # a target the Thinker chose is not allowed
    FailureKind.UNREACHABLE: "thinker",  # reach: another arm, a relay or another target
    FailureKind.NO_PLAN: "thinker",
    FailureKind.WRONG_ARM: "thinker",
    FailureKind.BAD_PARAMETERS: "thinker",  # the plan's arguments are malformed
    FailureKind.OBJECT_STATE: "thinker",  # the skill does not fit the object as it is
    FailureKind.GRASP_EMPTY: "projector",  # the grasp point
    FailureKind.GRASP_OFF_TARGET: "projector",
    FailureKind.NOT_HOLDING: "projector",
    FailureKind.EXECUTION: "projector",
    FailureKind.UNKNOWN_OBJECT: "grounder",
    FailureKind.DEVICE_FAULT: "actor",
    FailureKind.OTHER: "actor",
}
"""Which agent a failed skill call is sent back to, by the failure's kind."""


def blame_for(kind: FailureKind | None) -> AgentName:
    """The agent a failure of ``kind`` is blamed on (``BLAME_BY_KIND``; the Actor for an unknown kind)."""
    return BLAME_BY_KIND.get(FailureKind(kind), "actor") if kind is not None else "actor"


def actor(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    update = _act(state, runtime.context)
    # what the hands hold by the graph's own record, carried across attempts (an attempt refused before anything
    # moved changes nothing): an object left in a hand is looked for there (``in_hand.holding_arm``)
    update["in_hand"] = update["actor_report"].left_in_hand(state.get("in_hand"))
    return update


def _act(state: GraphState, ctx: GraphContext) -> dict[str, Any]:
    plan = state["action_plan"]
    localized = state["localized"]
    records: list[CommandRecord] = []
    if plan is None:
        return {"actor_report": ActorReport(ok=False, message="no action plan", failed_stage="thinker")}
    names: dict[str, str] = {}
    for call in [c for seq in (plan.calls, *plan.fallbacks) for c in seq]:
        if call.object is not None and call.object not in names:
            obj = localized.get(call.object)
            if obj is None:
                return {"actor_report": ActorReport(ok=False, message=f"{call.object} was never localised",
                                                    failed_stage="thinker")}
            held = held_by_plan_arm(plan.calls, call.object, ctx)
            radius_m = max(ctx.match_radius_m, HELD_MATCH_RADIUS_M) if held else ctx.match_radius_m
            name, why = match_object(obj, ctx.world, radius_m, list(localized.values()))
            if name is None:  # the same perceived pose binds no better next time: a settled kind
                step = FailedStep(kind=FailureKind.UNKNOWN_OBJECT, skill=call.skill, arm=call.arm)
                return {"actor_report": ActorReport(ok=False, message=why, failed_stage="grounder", failed_step=step)}
            names[call.object] = name
    labelled = every_call(plan)
    malformed = plan_argument_problem([c for _, c in labelled], names, ctx.world)
    if malformed is not None:  # every argument of every call (and every other way) is checked before anything moves
        i, problem = malformed
        label, bad_call = labelled[i]
        reason = f"{label} ({bad_call.skill}, {bad_call.arm} arm): {problem.message}"
        ctx.emit("safety_refusal", arm=bad_call.arm, command=bad_call.skill, reason=reason)
        return {"actor_report": ActorReport(
            ok=False, message=f"plan refused before anything moved: {reason}", failed_stage=blame_for(problem.kind),
            failed_step=FailedStep(kind=problem.kind, skill=bad_call.skill, arm=bad_call.arm))}
    refused = plan_violation(plan.calls, ctx, localized)
    if refused is not None:  # every target of the plan is checked before anything moves
        i, bad = refused
        call = plan.calls[i]
        ctx.emit("safety_refusal", arm=call.arm, command=call.skill, reason=bad)
        step = FailedStep(kind=FailureKind.REFUSED_BY_GUARD, skill=call.skill, arm=call.arm)
        return {"actor_report": ActorReport(ok=False, message=f"refused: {bad}", failed_stage="thinker",
                                            failed_step=step)}
    # a fallback with a target that must not be reached is left out (it is only another way)
    sequences = [plan.calls] + [seq for seq in plan.fallbacks if plan_violation(seq, ctx, localized) is None]
    if state["attempts"].get(str(state["subtask_index"]), 0) > 0 and (parked := _park_idle_arms(ctx, records)):
        # end-effector actions made before the parking hold a parked arm still where it was: it stays parked
        sequences = [_follow_parked(seq, parked) for seq in sequences]
        refused = plan_violation(sequences[0], ctx, localized)
        if refused is not None:
            i, bad = refused
            call = sequences[0][i]
            ctx.emit("safety_refusal", arm=call.arm, command=call.skill, reason=bad)
            step = FailedStep(kind=FailureKind.REFUSED_BY_GUARD, skill=call.skill, arm=call.arm)
            return {"actor_report": ActorReport(ok=False, message=f"refused: {bad}", commands=records,
                                                failed_stage="thinker", failed_step=step)}
        sequences = [sequences[0]] + [seq for seq in sequences[1:] if plan_violation(seq, ctx, localized) is None]
    used_arms: set[str] = set()
    start = _arm_states(ctx)
    report: ActorReport | None = None
    for k, seq in enumerate(sequences):
        report = _run_sequence(ctx, seq, names, records, used_arms)
        taken = _took_something(records)
        kind = report.failed_step.kind if report.failed_step is not None else None
        if report.ok or kind not in RETRY_KINDS or taken or k == len(sequences) - 1:
            break
    assert report is not None
    if not report.ok and report.failed_step is not None:
        _recover(ctx, used_arms, records, FailureKind(report.failed_step.kind), report.failed_step.arm,
                 report.failed_step.skill)
        report = report.model_copy(update={"commands": records})
    return {"actor_report": report.model_copy(update={"start_arms": start, "aim_m": plan.aim_m, "relay": plan.relay})}


def _arm_states(ctx: GraphContext) -> dict[str, list[float]]:
    """Each arm's end-effector pose and gripper opening now (``ActorReport.start_arms``); an arm whose pose or
    opening cannot be read is left out."""
    out: dict[str, list[float]] = {}
    if ctx.gripper_opening is None:
        return out
    for arm in ARM_SIDES:
        try:
            pose = _ee_pose(ctx, arm)
            opening = ctx.gripper_opening(arm)
        except Exception as e:  # a sensor or driver fault: the Reflector then judges without it
            log.info("arm state of %s unread: %s", arm, e)
            continue
        if pose is not None:
            out[arm] = [*pose, float(opening)]
    return out


def _took_something(records: list[CommandRecord]) -> bool:
    """Whether a command that ran took something in a gripper: a grasp, a close, or an end-effector action that
    closed a gripper it had open before."""
    grips: dict[int, float] = {}
    for r in records:
        if not r.ok:
            continue
        if r.skill in GRASP_SKILLS or r.skill == "close_gripper":
            return True
        pose = r.args.get("target_pose")
        if r.skill == "execute_ee_action" and isinstance(pose, list) and len(pose) == 16:
            for i in (7, 15):
                if pose[i] < 0.5 <= grips.get(i, 1.0):
                    return True
                grips[i] = float(pose[i])
    return False


def _run_sequence(ctx: GraphContext, calls: list[SkillCall], names: dict[str, str], records: list[CommandRecord],
                  used_arms: set[str]) -> ActorReport:
    """Run ``calls`` in order, each with its alternatives; the report of the first that fails, else success."""
    for call in calls:
        name = names.get(call.object) if call.object else None
        used_arms.add(call.arm)
        tries = [call] + [call.variant(v) for v in call.alternatives]
        for n, attempt in enumerate(tries):
            kind, result = _run_call(ctx, attempt, name, records)
            if kind is None or kind not in RETRY_KINDS or n == len(tries) - 1:
                break
        if kind is not None:
            if kind == FailureKind.REFUSED_BY_GUARD:
                ctx.emit("safety_refusal", arm=call.arm, command=call.skill, reason=result.message)
            return ActorReport(ok=False, message=f"{call.skill} failed: {result.message}", commands=list(records),
                               failed_stage=blame_for(kind),
                               failed_step=FailedStep(kind=kind, skill=call.skill, arm=call.arm))
    return ActorReport(ok=True, message="all skills succeeded", commands=list(records))


def _run_call(ctx: GraphContext, call: SkillCall, name: str | None,
              records: list[CommandRecord]) -> tuple[FailureKind | None, SkillResult]:
    """Run one call, record it and emit its event; (the failure's kind or None, the result)."""
    try:
        result = _call_skill(ctx, call, name)
    except Exception as e:  # a driver fault must become a reported failure, not a crash
        log.warning("skill %s raised: %s", call.skill, e)
        result = SkillResult.failure(f"{call.skill} raised {type(e).__name__}: {e}", FailureKind.DEVICE_FAULT)
    args = {"object": name, "target_pose": call.target_pose, **call.args}
    kind = None if result.ok else (result.kind or FailureKind.OTHER)
    records.append(CommandRecord(skill=call.skill, arm=call.arm, args=args, ok=result.ok, message=result.message,
                                 kind=kind, ref=call.object))
    ctx.emit("actor_command", arm=call.arm, skill=call.skill, args=args, ok=result.ok, message=result.message,
             **({"failure_kind": str(kind)} if kind is not None else {}))
    return kind, result


def _park_idle_arms(ctx: GraphContext, records: list[CommandRecord]) -> dict[str, tuple[list[float], list[float]]]:
    """Before a retry: send home the arms whose grippers hold nothing. A failure the Reflector found (an object
    that slipped out unnoticed by the skill, say) leaves the arms where the last attempt ended, perhaps touching
    the object the retry is about; like ``_recover`` after a failed skill, the retry starts from a known state.
    Returns, per arm sent home, its end-effector pose before and after (where both could be read)."""
    parked: dict[str, tuple[list[float], list[float]]] = {}
    if ctx.gripper_holding is None:
        return parked
    for arm in ARM_SIDES:
        try:
            if ctx.gripper_holding(arm):
                continue
            before = _ee_pose(ctx, arm)
            r = ctx.skills.back_to_origin(arm)
            after = _ee_pose(ctx, arm) if r.ok else None
        except Exception as e:  # a sensor or driver fault: leave the arm where it is, the retry reports the rest
            r = SkillResult.failure(f"{type(e).__name__}: {e}", FailureKind.DEVICE_FAULT)
            before = after = None
        records.append(CommandRecord(skill="back_to_origin", arm=arm, args={"park": True}, ok=r.ok, message=r.message))
        ctx.emit("actor_command", arm=arm, skill="back_to_origin", args={"park": True}, ok=r.ok, message=r.message)
        if before is not None and after is not None:
            parked[arm] = (before, after)
    return parked


def _ee_pose(ctx: GraphContext, arm: str) -> list[float] | None:
    """The arm's end-effector pose [x, y, z, qw, qx, qy, qz], or None when it cannot be read."""
    r = ctx.skills.get_arm_pose(arm)  # type: ignore[arg-type]
    pose = r.data.get("pose") if r.ok else None
    return [float(v) for v in pose] if isinstance(pose, (list, tuple)) and len(pose) == 7 else None


STILL_TOL = 0.005  # an arm's half of an end-effector action this close to its pose (m, and per quaternion number)


def _follow_parked(seq: list[SkillCall], parked: dict[str, tuple[list[float], list[float]]]) -> list[SkillCall]:
    """``seq`` with each parked arm's half of its end-effector actions (``execute_ee_action``'s 16 numbers, and
    their alternatives') set to where the parking took it, where every such half held that arm still at its pose
    before the parking: a plan made before a retry's parking would take the arm back there, into the other arm's
    way. A half that moves the arm is the plan's own and stays."""
    def halves(call: SkillCall) -> list[list[float]]:
        poses = [call.target_pose, *(v.target_pose for v in call.alternatives)]
        return [p for p in poses if call.skill == "execute_ee_action" and p is not None and len(p) == 16]

    out = list(seq)
    for arm, (before, after) in parked.items():
        k = 0 if arm == "left" else 8
        poses = [p for c in out for p in halves(c)]
        if not poses or any(max(abs(a - b) for a, b in zip(p[k:k + 7], before, strict=True)) > STILL_TOL
                            for p in poses):
            continue

        def moved(p: list[float] | None, k: int = k, after: list[float] = after) -> list[float] | None:
            return None if p is None or len(p) != 16 else [*p[:k], *after, *p[k + 7:]]

        out = [c.model_copy(update={
            "target_pose": moved(c.target_pose),
            "alternatives": [v.model_copy(update={"target_pose": moved(v.target_pose)}) for v in c.alternatives]})
            if c.skill == "execute_ee_action" else c for c in out]
    return out


def _recover(ctx: GraphContext, arms: set[str], records: list[CommandRecord], kind: FailureKind | None = None,
             failed_arm: str | None = None, failed_skill: str | None = None) -> None:
    """After a failure: open the grippers used and send those arms home, so a retry starts from a known state.

    An arm that holds an object keeps it and goes home with it after a refused motion (``KEEP_HOLD_KINDS``), and
    whatever failed when the failed call was the other arm's (a hand-over whose taker missed): the retry starts
    from the object in hand instead of wherever it would fall; with end-effector actions (which are planned from
    where the hands are) it stays where it is. An arm whose way home was what failed is not sent home again at
    once (the same motion planned from the same pose fails the same way)."""
    for arm in sorted(arms):
        keep = (kind in KEEP_HOLD_KINDS or (failed_arm is not None and arm != failed_arm)) and _holds(ctx, arm)
        stuck = failed_skill == "back_to_origin" and arm == failed_arm
        if keep and getattr(ctx, "action_space", "primitives") == "ee":
            continue  # end-effector actions are planned from where the hands are: it stays, holding
        steps = ("back_to_origin",) if keep else ("open_gripper",) if stuck else ("open_gripper", "back_to_origin")
        for skill in steps:
            try:
                r = ctx.skills.open_gripper(arm) if skill == "open_gripper" else ctx.skills.back_to_origin(arm)  # type: ignore[arg-type]
            except Exception as e:
                r = SkillResult.failure(f"{type(e).__name__}: {e}", FailureKind.DEVICE_FAULT)
            records.append(CommandRecord(skill=skill, arm=arm, args={"recovery": True}, ok=r.ok, message=r.message))
            ctx.emit("actor_command", arm=arm, skill=skill, args={"recovery": True}, ok=r.ok, message=r.message)


def _holds(ctx: GraphContext, arm: str) -> bool:
    if ctx.gripper_holding is None:
        return False
    try:
        return bool(ctx.gripper_holding(arm))  # type: ignore[arg-type]
    except Exception as e:  # a sensor fault: assume empty, the gripper is opened as before
        log.warning("gripper sensor of the %s arm failed: %s", arm, e)
        return False
