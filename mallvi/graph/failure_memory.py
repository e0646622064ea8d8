"""Failure memory: per subtask, what each failed attempt tried and how it failed.

An entry keeps the attempt's skill calls, the strategy's name, the object and where it lay when the attempt was
planned, the skill and arm that failed and the failure's kind (the skill's ``FailureKind`` value, or the
Reflector's category when every skill reported success). The Thinker consults it so that no attempt repeats a
failed one unchanged: the same calls (targets within ``TARGET_TOL_M``) on an object that has not moved more than
``POSE_TOL_M`` since. A grasp that failed for a reason of geometry (``ARM_BLOCKING_KINDS``: no IK, no path, the
arm not allowed) rules that arm's grasp out at that pose in every strategy, not only in the same plan.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from mallvi.graph.schemas import ActionPlan, ActorReport, SceneObject, SkillCall, StageError, Verdict

POSE_TOL_M = 0.02
"""An object that moved less than this since a failed attempt still lies where that attempt failed."""
TARGET_TOL_M = 0.02
"""Two calls whose targets differ by less than this are the same call."""
GRASP_SKILLS = ("grasp_actor", "upright_actor")
ARM_BLOCKING_KINDS = ("unreachable", "no_plan", "wrong_arm")
"""Failure kinds of a grasp that the same arm cannot overcome at the same pose by any other plan."""
CHANCE_KINDS = ("grasp_empty", "grasp_off_target", "not_holding", "execution")
"""Failures a retry of the same grasp may well not meet again (a miss, a slip): never ``decisive`` by themselves."""
RECURRING_AFTER = 3
"""A chance failure met this often by the same calls at the same pose is taken as settled there (``recurring``)."""
RECURRING_POSE_TOL_M = 0.04
"""Poses within this count as the same for ``recurring``: an object that slips out lands a centimetre or two from
where it was lifted, so a grasp that never holds it walks it along."""
SETTLED_KINDS = ("unreachable", "no_plan", "wrong_arm", "refused_by_guard", "bad_parameters", "unknown_object")
"""Failure kinds that the same call meets again in the same situation (no chance involved)."""
UNBOUND_KIND = "unknown_object"
"""The kind of an object that no robot-side object matches where it is perceived: every plan on it fails the same
way until it is perceived elsewhere."""
IGNORED_ARGS = frozenset({"pre_grasp_dis", "grasp_dis"})
"""Arguments whose change alone does not make a different attempt (a shorter approach to the same grasp, the same
grasp stopping 1 cm short: a variant the Actor tries within the attempt). A place's
``pre_dis`` does: a lower pre-place point is another pose to reach."""
DISTANCE_ARGS = frozenset({"x", "y", "z", "pre_dis"})
"""Arguments in metres: two values within ``TARGET_TOL_M`` are the same."""
LOST_KIND = "lost_from_view"
"""The kind of an attempt that found an object the subtask needs neither in the scene nor in any camera's image."""
RESCAN = "re-scan"
"""The strategy name of the marker left when the Descriptor re-scanned because no strategy was left."""


class FailedAttempt(BaseModel):
    """One failed attempt at a subtask (or the marker of a re-scan made because no strategy was left)."""

    model_config = ConfigDict(extra="forbid")

    strategy: str
    calls: list[SkillCall] = Field(default_factory=list)
    object_id: str | None = None
    pose_m: list[float] | None = None  # world frame, where the object lay when the attempt was planned
    skill: str | None = None  # the call that failed (None: every call succeeded, the Reflector found the failure)
    failed_call: int | None = None  # its index in ``calls``
    arm: str | None = None
    kind: str = "other"  # FailureKind value of the failed skill, else the Reflector's failure category
    explanation: str = ""

    def line(self) -> str:
        """One human-readable line: strategy, what failed, kind."""
        where = f" at ({self.pose_m[0]:.2f}, {self.pose_m[1]:.2f})" if self.pose_m else ""
        what = f"{self.skill} ({self.arm} arm)" if self.skill else "the check after the action"
        return f"{self.strategy or 'plan'}{where}: {what} failed [{self.kind}]"


def object_of(calls: Sequence[SkillCall]) -> str | None:
    """The object a plan works on: the first call that names one."""
    return next((c.object for c in calls if c.object is not None), None)


def strategy_of(calls: Sequence[SkillCall]) -> str:
    """A short name for what a plan does: "direct left", "relay right->left", "re-grasp left", "nudge left", "place
    right"."""
    grasps = [c.arm for c in calls if c.skill in GRASP_SKILLS]
    if calls and calls[0].skill == "close_gripper" and any(c.skill == "move_to_pose" for c in calls):
        return f"nudge {calls[0].arm}"
    if len(grasps) >= 2:
        return f"relay {grasps[0]}->{grasps[-1]}" if grasps[0] != grasps[-1] else f"re-grasp {grasps[0]}"
    if grasps:
        return f"direct {grasps[0]}"
    return f"place {calls[0].arm}" if calls else "plan"


def pose_of(obj_id: str | None, localized: dict[str, SceneObject]) -> list[float] | None:
    obj = localized.get(obj_id) if obj_id else None
    return [float(v) for v in obj.position_m] if obj is not None else None


def _report_kind(report: ActorReport | None) -> str | None:
    """The kind of the call an Actor report failed at (a refused plan: ``refused_by_guard``), if any."""
    step = report.failed_step if report is not None else None
    return str(step.kind) if step is not None and step.kind is not None else None


def record(plan: ActionPlan | None, localized: dict[str, SceneObject], report: ActorReport | None,
           err: StageError | None, verdict: Verdict) -> FailedAttempt:
    """The memory entry for a failed attempt: the plan that ran (if any) and how it failed."""
    calls = list(plan.calls) if plan is not None and err is None else []
    oid = object_of(calls)
    entry = FailedAttempt(strategy=(plan.strategy if plan is not None and err is None else "") or strategy_of(calls),
                          calls=calls, object_id=oid, pose_m=pose_of(oid, localized),
                          explanation=verdict.explanation[:300])
    if err is not None:
        kind = LOST_KIND if err.lost else f"{err.agent}_failed"
        return entry.model_copy(update={"strategy": f"{err.agent} stage", "kind": kind})
    own = [c for c in report.commands if not (c.args.get("recovery") or c.args.get("park"))] if report else []
    failed = next((c for c in reversed(own) if not c.ok), None) if report is not None and not report.ok else None
    if failed is not None:
        kind = failed.kind or _report_kind(report) or "other"
        # the plan's call that failed: a call whose variants ran left more commands than calls
        same = [i for i, c in enumerate(calls) if (c.skill, c.arm) == (failed.skill, failed.arm)]
        at = same[0] if len(same) == 1 else (own.index(failed) if calls and len(own) <= len(calls) else None)
        return entry.model_copy(update={"skill": failed.skill, "arm": failed.arm, "kind": kind, "failed_call": at})
    if report is not None and not report.ok:  # refused before any call ran (e.g. a target the checks refused)
        return entry.model_copy(update={"kind": _report_kind(report) or "other"})
    return entry.model_copy(update={"kind": verdict.failure_category or "other"})


EE_POSITIONS = (0, 1, 2, 8, 9, 10)  # an end-effector action's two hand positions among its 16 numbers


def _same_call(a: SkillCall, b: SkillCall, positions_only: bool = False) -> bool:
    """Whether ``a`` repeats ``b``: skill, arm, object, target (within ``TARGET_TOL_M``) and arguments;
    ``positions_only``: an end-effector action's hand positions, not its turns and grippers."""
    if (a.skill, a.arm, a.object) != (b.skill, b.arm, b.object):
        return False
    if (a.target_pose is None) != (b.target_pose is None):
        return False
    if a.target_pose is not None and b.target_pose is not None:
        if len(a.target_pose) != len(b.target_pose):
            return False
        if len(a.target_pose) == 16:  # an end-effector action: both arms' positions, turns and grippers
            at = EE_POSITIONS if positions_only else range(16)
            if any(abs(a.target_pose[i] - b.target_pose[i]) > TARGET_TOL_M for i in at):
                return False
        elif math.dist(a.target_pose[:3], b.target_pose[:3]) > TARGET_TOL_M:
            return False
    keys = (set(a.args) | set(b.args)) - IGNORED_ARGS
    for k in keys:
        va, vb = a.args.get(k), b.args.get(k)
        if isinstance(va, (int, float)) and isinstance(vb, (int, float)) and not isinstance(va, bool):
            if abs(float(va) - float(vb)) > (TARGET_TOL_M if k in DISTANCE_ARGS else 1e-6):
                return False
        elif va != vb:
            return False
    return True


def same_pose(a: Sequence[float] | None, b: Sequence[float] | None, tol_m: float = POSE_TOL_M) -> bool:
    return a is not None and b is not None and math.dist(a[:3], b[:3]) <= tol_m


def decisive(m: FailedAttempt) -> bool:
    """Whether the failure says the same attempt would fail again where the object lies: a kind that chance does
    not change (``SETTLED_KINDS``), or a failure before the object was first taken (while it lay where it was
    planned from) unless its kind is one chance decides (``CHANCE_KINDS``: a miss, a slip). A failure after the
    object was taken (it slipped, was put off target) says nothing against
    the attempt itself. A push, pull or topple (no grasp, no place) whose calls all ran is decisive too: it is
    repeated only where the object still lies (it did not move it), and there it would not move it again."""
    if m.kind in SETTLED_KINDS:
        return True
    if m.failed_call is None and m.calls and not any(c.skill in GRASP_SKILLS or c.skill == "place_actor"
                                                     for c in m.calls):
        return True  # a push that ran to its end (no fault acts on one): where the object lies, it does the same
    if m.failed_call is None or m.kind in CHANCE_KINDS:
        return False
    first_take = next((i for i, c in enumerate(m.calls) if c.skill in GRASP_SKILLS), None)
    return first_take is None or m.failed_call <= first_take


def recurring(m: FailedAttempt, memory: Sequence[FailedAttempt]) -> bool:
    """Whether a failure of a kind chance decides (a miss, a slip) met the same calls at the same pose at least
    ``RECURRING_AFTER`` times: chance alone does that rarely (at ``medium``, 1 in 64), a grasp that cannot hold the
    object there every time."""
    if m.kind not in CHANCE_KINDS or m.failed_call is None:
        return False
    n = m.failed_call + 1
    same = [o for o in memory if o.kind == m.kind and o.failed_call == m.failed_call
            and same_pose(o.pose_m, m.pose_m, RECURRING_POSE_TOL_M)
            and len(o.calls) >= n and len(m.calls) >= n
            and all(_same_call(a, b) for a, b in zip(o.calls[:n], m.calls[:n], strict=True))]
    return len(same) >= RECURRING_AFTER


def repeats(calls: Sequence[SkillCall], localized: dict[str, SceneObject],
            memory: Sequence[FailedAttempt]) -> FailedAttempt | None:
    """The failed attempt that ``calls`` would repeat unchanged (same calls, object where it was, a failure that
    would recur: ``decisive`` or ``recurring``; any plan on an object not bound where it is perceived,
    ``UNBOUND_KIND``), or None.
    When the failed call is known, the same calls up to it are a repeat whatever follows (a plan that differs only
    after the call that failed meets the same failure first)."""
    pose = pose_of(object_of(calls), localized)
    unbound = next((m for m in memory if m.kind == UNBOUND_KIND and m.object_id == object_of(calls)
                    and same_pose(m.pose_m, pose)), None)
    if unbound is not None:  # whatever the plan, the object is not found where it is perceived
        return unbound
    for m in memory:
        if not m.calls or not same_pose(m.pose_m, pose) or not (decisive(m) or recurring(m, memory)):
            continue
        upto = m.failed_call + 1 if m.failed_call is not None and m.failed_call < len(m.calls) else None
        if upto is None and len(m.calls) != len(calls):
            continue
        n = upto or len(calls)
        where = m.kind == "refused_by_guard"  # the guard refuses a place, whatever the hand's turn there
        if len(calls) >= n and all(_same_call(a, b, where) for a, b in zip(calls[:n], m.calls[:n], strict=True)):
            return m
    oid = object_of(calls)
    blocked = blocked_grasps(memory, oid, pose)
    for c in calls:
        if c.object == oid and c.skill == "place_actor":
            break  # later grasps take the object where this plan put it, not where it lies now
        if c.skill in GRASP_SKILLS and c.arm in blocked and c.object == oid:
            return blocked[c.arm]
    return None


def blocked_grasps(memory: Sequence[FailedAttempt], obj_id: str | None,
                   pose: Sequence[float] | None) -> dict[str, FailedAttempt]:
    """Per arm, the failed grasp of ``obj_id`` at this pose whose kind that arm cannot overcome (no IK, no path,
    not allowed). Only a grasp of the object where it lay when planned counts (not one after the plan moved it), and
    only one free to choose any contact point (a grasp held to one family says nothing about the others)."""
    out: dict[str, FailedAttempt] = {}
    for m in memory:
        if m.skill in GRASP_SKILLS and m.arm and m.kind in ARM_BLOCKING_KINDS and m.object_id == obj_id \
                and same_pose(m.pose_m, pose) and _free_first_take(m):
            out.setdefault(m.arm, m)
    return out


def _free_first_take(m: FailedAttempt) -> bool:
    """Whether ``m`` failed at its first grasp of the object (or at a call not known) with no contact point set."""
    if m.failed_call is None or m.failed_call >= len(m.calls):
        return True
    call = m.calls[m.failed_call]
    first = next((i for i, c in enumerate(m.calls) if c.skill in GRASP_SKILLS and c.object == m.object_id), None)
    return m.failed_call == first and "contact_point_id" not in call.args


def rescanned_last(memory: Sequence[FailedAttempt]) -> bool:
    """Whether the last thing remembered is a re-scan made because no strategy was left (nothing tried since)."""
    return bool(memory) and memory[-1].strategy == RESCAN


def geometry_failures(memory: Sequence[FailedAttempt]) -> int:
    """How many of the remembered failures were of geometry (``ARM_BLOCKING_KINDS``: no inverse-kinematics
    solution, no path, the arm not allowed): failures that spend none of the budget (``Budgets``)."""
    return sum(1 for m in memory if m.kind in ARM_BLOCKING_KINDS)


def lost_again(memory: Sequence[FailedAttempt]) -> bool:
    """Whether the last two things remembered are both an object lost from view: the second came after the re-scan
    that the first one asked for (the Descriptor's re-scan looks through the second camera too)."""
    return len(memory) >= 2 and memory[-1].kind == LOST_KIND and memory[-2].kind == LOST_KIND


def summary(memory: Sequence[FailedAttempt], limit: int = 8) -> str:
    """The failed attempts as numbered lines (the newest ``limit``), for prompts and failure reports."""
    tried = [m for m in memory if m.strategy != RESCAN]
    lines = [f"{i + 1}. {m.line()}" for i, m in enumerate(tried)][-limit:]
    return "; ".join(lines) if lines else "none"
