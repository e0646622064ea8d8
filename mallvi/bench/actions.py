"""The benchmark's action interface: Tier 2 primitive calls (ids 2.2-2.9) and Tier 3 16-dim EE actions.

Planner output is untrusted: every malformed action becomes a failed ``SkillResult`` of kind ``BAD_PARAMETERS``
with a message that goes back to the planner as feedback, never an exception. Every argument is checked by the
skills' shared whole-plan check (``robot_drivers.safety.skill_args``), and the episode loops check a turn's whole
chunk (``chunk_problem``) before its first action runs.

``semantics`` chooses the skills' behaviour: "mallvi" (our skills: a grasp lifts the object 5 cm and checks it is
held; a Tier 3 action plans both arms and runs only if both can go) or "paper" (the original benchmark's, in
``paper_skills``: a grasp neither lifts nor checks; the task may refuse a place (``BenchTask.place_refusal``); a
Tier 3 action moves each arm that can go and stops at the first physics step where the task succeeds).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

from mallvi.bench import paper_skills
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld
from mallvi.contracts.geometry import parse_arm
from mallvi.contracts.skills import FailureKind, SkillResult
from mallvi.robot_drivers.safety.skill_args import check_call, check_plan

BAD = FailureKind.BAD_PARAMETERS

log = logging.getLogger(__name__)

ACTION_NAMES: dict[str, str] = {
    "2.2": "grasp_actor",
    "2.3": "place_actor",
    "2.4": "move_by_displacement",
    "2.5": "move_to_pose",
    "2.6": "close_gripper",
    "2.7": "open_gripper",
    "2.8": "back_to_origin",
    "2.9": "get_arm_pose",
}
ACTION_IDS: dict[str, str] = {v: k for k, v in ACTION_NAMES.items()}

ACTION_PARAMETERS: dict[str, frozenset[str]] = {
    "grasp_actor": frozenset({"actor", "arm_tag", "pre_grasp_dis", "grasp_dis", "gripper_pos", "contact_point_id"}),
    "place_actor": frozenset(
        {"actor", "arm_tag", "target_pose", "functional_point_id", "pre_dis", "dis", "is_open", "constrain"}
    ),
    "move_by_displacement": frozenset({"arm_tag", "x", "y", "z", "quat", "move_axis"}),
    "move_to_pose": frozenset({"arm_tag", "target_pose"}),
    "close_gripper": frozenset({"arm_tag", "pos"}),
    "open_gripper": frozenset({"arm_tag", "pos"}),
    "back_to_origin": frozenset({"arm_tag"}),
    "get_arm_pose": frozenset({"arm_tag"}),
}
#: actions that take ``arm_tag: "both"`` (as the original's executor does): left, then right
BOTH_ARMS_ACTIONS = frozenset({"back_to_origin", "move_by_displacement"})
#: place_actor options of the original API that our skills do not take; accepted and ignored
_IGNORED_PLACE_OPTIONS = frozenset({"align_axis", "actor_axis", "actor_axis_type", "pre_dis_axis"})


def make_action(name: str, **parameters: Any) -> dict[str, Any]:
    """An action in the planner's JSON form, e.g. ``make_action("back_to_origin", arm_tag="left")``."""
    if name not in ACTION_IDS:
        raise ValueError(f"unknown action {name!r}")
    return {"action_id": ACTION_IDS[name], "action_name": name, "parameters": dict(parameters)}


def action_name(action: Mapping[str, Any]) -> str | None:
    """The action's name from ``action_name`` or ``action_id``; None if neither is known."""
    name = action.get("action_name")
    if isinstance(name, str) and name in ACTION_PARAMETERS:
        return name
    aid = str(action.get("action_id", "")).strip()
    return ACTION_NAMES.get(aid)


def execute_action(task: BenchTask, world: BenchWorld, action: Any, semantics: str = "mallvi") -> SkillResult:
    """Run one Tier 2 action through ``world.skills`` (after the arm-allocation check for grasps) with the skill
    ``semantics`` ("mallvi" or "paper", see the module's docstring).

    Its arguments are checked whole first (``action_problem``). A skill that raises instead of returning a result
    is reported as a failed action (and logged).
    """
    try:
        calls = prepare_action(action)
        if isinstance(calls, SkillResult):
            return calls
        bad = _calls_problem(world, calls)
        if bad is not None:
            return bad
        candidates = _contact_candidates(action) if semantics == "paper" else None
        for name, kwargs in calls:
            result = _run_call(task, world, name, kwargs, semantics, candidates)
            if len(calls) > 1 and not result.ok:  # arm_tag "both": say which arm failed
                return SkillResult(False, f"{kwargs['arm_tag']} arm: {result.message}", result.data, result.kind)
            if not result.ok or len(calls) == 1:
                return result
        return SkillResult.success()
    except Exception as e:  # a skill bug must not end the episode unreported
        log.warning("skill raised on %r: %s: %s", action, type(e).__name__, e)
        return SkillResult.failure(f"the skill raised {type(e).__name__}: {e}", FailureKind.DEVICE_FAULT, raised=True)


def _contact_candidates(action: Mapping[str, Any]) -> list[int] | None:
    """A grasp's list of contact points (the original API tries each in turn), or None for one or none."""
    value = (action.get("parameters") or {}).get("contact_point_id")
    if not isinstance(value, list):
        return None
    return [int(c) for c in value]


def prepare_action(action: Any) -> list[tuple[str, dict[str, Any]]] | SkillResult:
    """The skill calls (name, keyword arguments) a Tier 2 action in the planner's JSON form stands for: one, or
    the left arm's and then the right's for ``arm_tag: "both"``; a ``BAD_PARAMETERS`` failure when it is malformed.
    Parameters are coerced as the original's executor does (numbers given as text, a list of contact points)."""
    if not isinstance(action, Mapping):
        return SkillResult.failure(f"an action must be a JSON object, got {type(action).__name__}", BAD)
    name = action_name(action)
    if name is None:
        return SkillResult.failure(
            f"unknown action {action.get('action_name') or action.get('action_id')!r}; use ids 2.2 to 2.9", BAD
        )
    params = action.get("parameters", {})
    if not isinstance(params, Mapping):
        return SkillResult.failure(f"{name}: parameters must be a JSON object", BAD)
    params = {k: v for k, v in params.items() if not (name == "place_actor" and k in _IGNORED_PLACE_OPTIONS)}
    unknown = sorted(set(params) - ACTION_PARAMETERS[name])
    if unknown:
        return SkillResult.failure(f"{name} has no parameter(s) {', '.join(unknown)}", BAD)
    arms: list[object] = [params.get("arm_tag", "")]
    if name in BOTH_ARMS_ACTIONS and str(params.get("arm_tag", "")).strip().lower() == "both":
        arms = ["left", "right"]
    calls: list[tuple[str, dict[str, Any]]] = []
    for arm_tag in arms:
        try:
            arm = parse_arm(str(arm_tag))
            kwargs = {k: _clean(k, v) for k, v in params.items() if k != "arm_tag"}
        except (ValueError, TypeError) as e:
            return SkillResult.failure(f"{name}: {e}", BAD)
        calls.append((name, {**kwargs, "arm_tag": arm}))
    return calls


def _calls_problem(world: BenchWorld, calls: list[tuple[str, dict[str, Any]]]) -> SkillResult | None:
    """Why the prepared calls must not run (the shared whole-plan check of every argument), or None."""
    bad = check_plan(calls, set(world.objects))
    return None if bad is None else bad[1].result()


def action_problem(world: BenchWorld, action: Any) -> SkillResult | None:
    """Why a Tier 2 action must not run, its every argument checked (the skills' declared signatures, object
    names against the world), or None."""
    calls = prepare_action(action)
    return calls if isinstance(calls, SkillResult) else _calls_problem(world, calls)


def chunk_problem(world: BenchWorld, actions: Sequence[Any], fine: bool = False,
                  semantics: str = "mallvi") -> tuple[int, SkillResult] | None:
    """The first action of a chunk (its 0-based index) that must not run and why, checked for every action before
    the first runs (Tier 3: each 16-number action; ``fine``); None when all are well formed."""
    for i, action in enumerate(actions):
        bad = ee_action_problem(action, still_arms=semantics == "paper") if fine else action_problem(world, action)
        if bad is not None:
            return i, bad
    return None


#: an arm's 8 numbers that stand for "this arm stays" in the check (the paper semantics' NaN arm)
_STILL_ARM = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]


def ee_action_problem(action: Any, still_arms: bool = False) -> SkillResult | None:
    """Why a Tier 3 action (16 numbers) must not run: its length, a NaN, a non-unit quaternion, a gripper
    opening outside 0..1; or None. With ``still_arms`` (the paper semantics) an arm whose 8 numbers hold a NaN
    stays where it is and is not checked further."""
    if still_arms and isinstance(action, Sequence) and not isinstance(action, str) and len(action) == 16:
        def nan(v: Any) -> bool:
            return isinstance(v, float) and math.isnan(v)

        action = [*(_STILL_ARM if any(nan(v) for v in action[:8]) else action[:8]),
                  *(_STILL_ARM if any(nan(v) for v in action[8:]) else action[8:])]
    bad = check_call("execute_ee_action", {"action": action})
    return None if bad is None else bad.result()


def _run_call(task: BenchTask, world: BenchWorld, name: str, kwargs: dict[str, Any], semantics: str = "mallvi",
              candidates: list[int] | None = None) -> SkillResult:
    """One checked skill call; a grasp passes the task's arm-allocation rule first. With the paper semantics a
    grasp tries ``candidates`` (else its one contact point) and does not lift, and the task may refuse a place."""
    if name == "grasp_actor":
        refusal = task.allocation_refusal(world, str(kwargs["actor"]), kwargs["arm_tag"])
        if refusal is not None:
            return SkillResult.failure(refusal, FailureKind.WRONG_ARM, refused=True)
        if semantics == "paper":
            rest = dict(kwargs)
            cp = rest.pop("contact_point_id", None)
            return paper_skills.grasp_actor(world, contact_point_ids=candidates or (None if cp is None else [cp]),
                                            **rest)
    if name == "place_actor" and semantics == "paper":
        refused = task.place_refusal(world, str(kwargs["actor"]), kwargs["target_pose"])
        if refused is not None:
            return SkillResult.failure(refused, BAD, refused=True)
    result: SkillResult = getattr(world.skills, name)(**kwargs)
    return result


def execute_ee_action(world: BenchWorld, action: Any, semantics: str = "mallvi",
                      task: BenchTask | None = None) -> SkillResult:  # fmt: skip
    """Run one Tier 3 action: 16 numbers [left xyz, quat wxyz, gripper, right xyz, quat wxyz, gripper].

    With ``semantics="paper"`` (``task`` needed: its success is checked every physics step) the numbers may hold
    NaN: that arm stays, as every arm whose target cannot be planned does.
    """
    if not isinstance(action, Sequence) or isinstance(action, str) or len(action) != 16:
        return SkillResult.failure("an end-effector action must be a list of 16 numbers", BAD)
    try:
        values = [float(v) for v in action]
    except (TypeError, ValueError):
        return SkillResult.failure("an end-effector action must contain numbers only", BAD)
    if semantics == "paper":
        if task is None:
            raise ValueError("the paper semantics check the task's success every physics step: give the task")
        try:
            return paper_skills.ee_action(task, world, values)
        except Exception as e:  # a skill bug must not end the episode unreported
            log.warning("paper ee_action raised: %s: %s", type(e).__name__, e)
            return SkillResult.failure(f"the skill raised {type(e).__name__}: {e}", FailureKind.DEVICE_FAULT,
                                       raised=True)  # fmt: skip
    if not all(math.isfinite(v) for v in values):
        return SkillResult.failure("an end-effector action contains NaN or infinity", BAD)
    try:
        return world.skills.execute_ee_action(values)
    except Exception as e:  # a skill bug must not end the episode unreported
        log.warning("execute_ee_action raised: %s: %s", type(e).__name__, e)
        return SkillResult.failure(f"the skill raised {type(e).__name__}: {e}", FailureKind.DEVICE_FAULT, raised=True)


def _clean(key: str, value: Any) -> Any:
    """Coerce one parameter to the type the skill expects; ValueError/TypeError with the parameter's name."""
    if key in {"pre_grasp_dis", "grasp_dis", "gripper_pos", "pre_dis", "dis", "x", "y", "z", "pos"}:
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"{key} must be finite")
        return v
    if key in {"target_pose", "quat"}:
        if value is None and key == "quat":
            return None
        seq = [float(v) for v in value]
        if key == "target_pose" and len(seq) not in (3, 7):
            raise ValueError(f"target_pose must have 3 or 7 numbers, got {len(seq)}")
        if key == "quat" and len(seq) != 4:
            raise ValueError("quat must have 4 numbers [w, x, y, z]")
        if not all(math.isfinite(v) for v in seq):
            raise ValueError(f"{key} contains NaN or infinity")
        return seq
    if key in {"contact_point_id", "functional_point_id"}:
        if value is None:
            return None
        if isinstance(value, list):  # the original API allows a list of candidates; take the first
            value = value[0] if value else None
            if value is None:
                return None
        return int(value)
    if key == "is_open":
        if isinstance(value, str):
            return value.strip().lower() in {"true", "1", "yes"}
        return bool(value)
    if key in {"constrain", "move_axis", "actor"}:
        return str(value)
    return value
