"""The benchmark's action interface: Tier 2 primitive calls (ids 2.2-2.9) and Tier 3 16-dim EE actions.

Planner output is untrusted: every malformed action becomes a failed ``SkillResult`` of kind ``BAD_PARAMETERS``
with a message that goes back to the planner as feedback, never an exception.

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

_PARAMS: dict[str, frozenset[str]] = {
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
    if isinstance(name, str) and name in _PARAMS:
        return name
    aid = str(action.get("action_id", "")).strip()
    return ACTION_NAMES.get(aid)


def execute_action(task: BenchTask, world: BenchWorld, action: Any, semantics: str = "mallvi") -> SkillResult:
    """Run one Tier 2 action through ``world.skills`` (after the arm-allocation check for grasps) with the skill
    ``semantics`` ("mallvi" or "paper", see the module's docstring).

    A skill that raises instead of returning a result is reported as a failed action (and logged).
    """
    try:
        return _execute_action(task, world, action, semantics)
    except Exception as e:  # a skill bug must not end the episode unreported
        log.warning("skill raised on %r: %s: %s", action, type(e).__name__, e)
        return SkillResult.failure(f"the skill raised {type(e).__name__}: {e}", FailureKind.DEVICE_FAULT, raised=True)


def _execute_action(task: BenchTask, world: BenchWorld, action: Any, semantics: str = "mallvi") -> SkillResult:
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
    unknown = sorted(set(params) - _PARAMS[name])
    if unknown:
        return SkillResult.failure(f"{name} has no parameter(s) {', '.join(unknown)}", BAD)
    if name in BOTH_ARMS_ACTIONS and str(params.get("arm_tag", "")).strip().lower() == "both":
        return _both_arms(task, world, action, params, semantics)
    candidates = params.get("contact_point_id")
    try:
        arm = parse_arm(str(params.get("arm_tag", "")))
        kwargs = {k: _clean(k, v) for k, v in params.items() if k != "arm_tag"}
        candidates = [int(c) for c in candidates] if isinstance(candidates, list) else None
    except (ValueError, TypeError) as e:
        return SkillResult.failure(f"{name}: {e}", BAD)
    skills = world.skills
    if name == "grasp_actor":
        actor = str(kwargs.pop("actor", ""))
        if actor not in world.objects:
            return SkillResult.failure(f"unknown object {actor!r}; objects are {', '.join(sorted(world.objects))}",
                                       FailureKind.UNKNOWN_OBJECT)
        refusal = task.allocation_refusal(world, actor, arm)
        if refusal is not None:
            return SkillResult.failure(refusal, FailureKind.WRONG_ARM, refused=True)
        if semantics == "paper":
            cp = kwargs.pop("contact_point_id", None)
            return paper_skills.grasp_actor(world, actor, arm, contact_point_ids=candidates or
                                            (None if cp is None else [cp]), **kwargs)  # fmt: skip
        return skills.grasp_actor(actor, arm, **kwargs)
    if name == "place_actor":
        actor = str(kwargs.pop("actor", ""))
        if "target_pose" not in kwargs:
            return SkillResult.failure("place_actor needs a target_pose", BAD)
        refused = task.place_refusal(world, actor, kwargs["target_pose"]) if semantics == "paper" else None
        if refused is not None:
            return SkillResult.failure(refused, BAD, refused=True)
        return skills.place_actor(actor, arm, **kwargs)
    if name == "move_by_displacement":
        return skills.move_by_displacement(arm, **kwargs)
    if name == "move_to_pose":
        if "target_pose" not in kwargs:
            return SkillResult.failure("move_to_pose needs a target_pose", BAD)
        return skills.move_to_pose(arm, **kwargs)
    if name == "close_gripper":
        return skills.close_gripper(arm, **kwargs)
    if name == "open_gripper":
        return skills.open_gripper(arm, **kwargs)
    if name == "back_to_origin":
        return skills.back_to_origin(arm)
    return skills.get_arm_pose(arm)


def _both_arms(task: BenchTask, world: BenchWorld, action: Mapping[str, Any], params: Mapping[str, Any],
               semantics: str = "mallvi") -> SkillResult:  # fmt: skip
    """``arm_tag: "both"``: the left arm's action, then the right's; fails with the first arm that fails."""
    for arm in ("left", "right"):
        result = _execute_action(task, world, {**action, "parameters": {**params, "arm_tag": arm}}, semantics)
        if not result.ok:
            return SkillResult(False, f"{arm} arm: {result.message}", result.data, result.kind)
    return SkillResult.success()


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
