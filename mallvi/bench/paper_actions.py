"""The original benchmark's executor for a model's actions, on our skills (the single agent's paper protocol).

Tier 2 (``run_action``): one action dict is read as the original's per-task ``take_action_by_dict`` reads it
(``paper_rules``): unknown keys are ignored, numbers written as text are converted, an object is named by
substrings, ``contact_point_id`` may list candidates, ``kwargs`` merge into a place. Then, unless the episode is
frozen, the skill runs with the original's semantics (``paper_skills``). What the executor answers is the
original's: ``True`` ("Action succeeded."), a message ("Action failed: ..."), or for ``get_arm_pose`` the pose
list, which the original's loop reports as a failure and which stops the chunk.

The freeze (the original's ``plan_success`` flag): a motion that cannot be planned is answered ``True`` and
freezes the episode; from then on every action that passes the checks before the motion (arm tag, object name,
pose format, the arm-allocation and box refusals) is answered ``True`` and moves nothing. A grasp whose pre-grasp
pose cannot be planned at all is a reported failure, not a freeze, as in the original.

Tier 3 (``parse_ee_item``): an action may be a list or a string; text numbers may hold arithmetic (``arith``).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from mallvi.bench import paper_skills
from mallvi.bench.actions import ACTION_PARAMETERS, prepare_action
from mallvi.bench.arith import evaluate
from mallvi.bench.paper_rules import RULES, TaskRules, resolve
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, pos
from mallvi.contracts.geometry import ArmSide
from mallvi.contracts.skills import FailureKind, SkillResult
from mallvi.robot_drivers.safety.skill_args import check_plan

#: failures that are a failed motion plan, which freeze the episode
PLAN_FAILURES = frozenset({FailureKind.UNREACHABLE, FailureKind.NO_PLAN, FailureKind.REFUSED_BY_GUARD})
ACTION_NAMES_TEXT = ("'grasp_actor', 'place_actor', 'move_by_displacement', 'move_to_pose', 'close_gripper', "
                     "'open_gripper', 'back_to_origin' or 'get_arm_pose'")
#: tasks whose move_to_pose passes a target_pose written as text on unparsed (so it fails)
_MOVE_TEXT_UNPARSED = frozenset({"handover_block", "handover_mic", "stack_blocks_three"})


@dataclass(frozen=True)
class Outcome:
    """One action as the original reports it (``reply``) and what really happened (``results``, honest)."""

    reply: Any  # True, an error message (str or tuple), or the pose list of get_arm_pose
    results: tuple[SkillResult, ...] = ()
    froze: bool = False  # a motion of this action could not be planned: the episode is frozen from now on
    query: bool = False  # get_arm_pose: reported as a failure by the loop, not an error of the skill
    refused: bool = False  # the benchmark's rules refused it (arm allocation, a place far from the box)

    @property
    def succeeded(self) -> bool:
        return self.reply is True

    @property
    def feedback(self) -> str:
        """The original's line for this action (each line ends with a newline)."""
        return "Action succeeded.\n" if self.reply is True else f"Action failed: {self.reply}\n"


def run_action(task: BenchTask, world: BenchWorld, action: Mapping[str, Any], frozen: bool) -> Outcome:
    """Run one Tier 2 action dict as the original's executor of ``task`` does (see the module docstring)."""
    rules = RULES[task.name]
    try:
        return _run(task, world, rules, action, frozen)
    except Exception as e:  # the original's catch-all: its message is a tuple with the exception
        return Outcome(("Error, please check the content: ", e))


def _run(task: BenchTask, world: BenchWorld, rules: TaskRules, action: Mapping[str, Any], frozen: bool) -> Outcome:
    params = action.get("parameters", {})
    arm_tag = params.get("arm_tag", "")
    if rules.lower_arm_tag:
        arm_tag = arm_tag.lower()
    if rules.empty_name_refused and action.get("action_name", "") == "":
        return Outcome("Invalid action name!!!")
    if arm_tag not in ("left", "right"):
        if "both" in arm_tag and action["action_name"] == "back_to_origin":
            return _motions(world, ["left", "right"], frozen, "Returning to origin", arm_tag,
                            lambda a: world.skills.back_to_origin(a))  # fmt: skip
        if rules.both_move == "back_only":
            return Outcome(f"Invalid arm tag: {arm_tag}. Must be 'left' or 'right' or 'both'. 'both' can only be used "
                           "in 'back_to_origin' action! ")  # fmt: skip
        if action["action_name"] != "move_by_displacement":
            return Outcome(f"Invalid arm tag: {arm_tag}. Must be 'left' or 'right' or 'both', 'both' only can be used "
                           "in action MOVE_BY_DISPLACEMENT.")  # fmt: skip
    actor = params.get("actor", None)
    target: str | None = None
    if isinstance(actor, str):
        actor = actor.lower()
        match = resolve(rules, actor)
        if match is None:
            return Outcome(f"Invalid actor: {actor}. {rules.invalid_actor}")
        if match.missing or match.obj not in world.objects:
            raise AttributeError(f"the task has no attribute for {match.obj}")
        target = match.obj
    name = action["action_name"]
    if name == "grasp_actor":
        return _grasp(task, world, rules, params, arm_tag, actor, target, frozen)
    if name == "place_actor":
        return _place(task, world, rules, params, arm_tag, target, frozen)
    if name == "move_by_displacement":
        return _displace(world, rules, params, arm_tag, frozen)
    if name == "move_to_pose":
        return _move_to_pose(task, world, params, arm_tag, frozen)
    if name in ("close_gripper", "open_gripper"):
        closing = name == "close_gripper"
        pos_value = params.get("pos", 0.0 if closing else 1.0)
        verb = "Closing gripper" if closing else "Opening gripper"
        try:
            pos_value = float(pos_value) if isinstance(pos_value, str) else pos_value
        except Exception as e:
            return Outcome(f"{verb} failed for {arm_tag} arm: {e}")
        if isinstance(pos_value, int | float) and math.isfinite(pos_value):
            pos_value = min(1.0, max(0.0, float(pos_value)))  # the original's gripper takes any value, clipped
        skill = world.skills.close_gripper if closing else world.skills.open_gripper
        return _motions(world, [arm_tag], frozen, verb, arm_tag, lambda a: skill(a, pos_value))
    if name == "back_to_origin":
        return _motions(world, [arm_tag], frozen, "Returning to origin", arm_tag,
                        lambda a: world.skills.back_to_origin(a))  # fmt: skip
    if name == "get_arm_pose":
        parts = paper_skills.skill_parts(world)
        return Outcome([float(v) for v in parts.arms[arm_tag].ee_pose().as_list()], query=True)
    return Outcome(f"Invalid action name: {name}. Must be {ACTION_NAMES_TEXT}.")


def _motions(world: BenchWorld, arms: list[str], frozen: bool, verb: str, arm_tag: str,
             run: Callable[[Any], SkillResult]) -> Outcome:  # fmt: skip
    """Run a motion skill for each arm (nothing when frozen); a plan failure freezes, other failures report."""
    if frozen:
        return Outcome(True)
    results: list[SkillResult] = []
    froze = False
    for arm in arms:
        try:
            result = run(arm)
        except Exception as e:
            return Outcome(f"{verb} failed for {arm_tag} arm: {e}", tuple(results))
        results.append(result)
        if result.ok:
            continue
        if result.kind in PLAN_FAILURES:
            froze = True  # the other arm of a both-arm motion still moves, as the original's
            continue
        return Outcome(f"{verb} failed for {arm_tag} arm: {result.message}", tuple(results))
    return Outcome(True, tuple(results), froze=froze)


def _side(arm: str) -> ArmSide:
    """An arm tag the checks before a skill found to be "left" or "right"."""
    return "left" if arm == "left" else "right"


def _number(params: Mapping[str, Any], key: str, default: float) -> Any:
    value = params.get(key, default)
    return float(value) if isinstance(value, str) else value


def _grasp(task: BenchTask, world: BenchWorld, rules: TaskRules, params: Mapping[str, Any], arm: str,
           actor: Any, target: str | None, frozen: bool) -> Outcome:  # fmt: skip
    if target is None:
        return Outcome(f"No target object specified for grasping: {arm}. Please specify the target object in the "
                       "parameters.")  # fmt: skip
    pre, dis, grip = _number(params, "pre_grasp_dis", 0.1), _number(params, "grasp_dis", 0.0), _number(
        params, "gripper_pos", 0.0)
    cp = params.get("contact_point_id", None)
    if isinstance(cp, str):
        cp = ast.literal_eval(cp) if task.name == "handover_block" else int(cp)
    t = task.allocation_threshold_m
    x = float(pos(world, target)[0])
    if t is not None and ((arm == "left" and x > t) or (arm == "right" and x < -t)):
        return Outcome(f"Action Failed: target {actor} is too far, {arm} arm can not finish this 'grasp' action! "
                       "Please use another arm!", refused=True)  # fmt: skip
    if frozen:
        return Outcome(True)
    try:
        candidates = None if cp is None else [int(c) for c in (cp if isinstance(cp, list | tuple) else [cp])]
        result = paper_skills.grasp_actor(world, target, arm, pre, dis, grip, candidates)
    except Exception as e:
        return Outcome(f"Grasping failed for {arm} arm: {e}")
    if result.ok:
        return Outcome(True, (result,))
    if result.data.get("pre_grasp_unplannable"):
        if rules.unplannable == "assert":
            return Outcome("Action Failed! This action can't be planned!!!", (result,))
        return Outcome(f"Grasping failed for {arm} arm: target_pose cannot be None for move action.", (result,))
    if result.kind in PLAN_FAILURES:
        return Outcome(True, (result,), froze=True)
    return Outcome(f"Grasping failed for {arm} arm: {result.message}", (result,))


def _pose_list(value: Any, parse_text: bool = True) -> Any:
    value = ast.literal_eval(value) if parse_text and isinstance(value, str) else value
    return [float(i) for i in value] if value else None


def _unit_quat(values: list[float]) -> list[float]:
    """A pose's quaternion normalised (the original's planner takes any non-zero quaternion); others as given."""
    if len(values) != 7:
        return values
    q = np.asarray(values[3:], dtype=float)
    n = float(np.linalg.norm(q))
    if not math.isfinite(n) or n < 1e-6:
        return values
    return [*values[:3], *(q / n).tolist()]


def _place(task: BenchTask, world: BenchWorld, rules: TaskRules, params: Mapping[str, Any], arm: str,
           target: str | None, frozen: bool) -> Outcome:  # fmt: skip
    if target is None:
        return Outcome(f"No target object specified for placing:{arm}. Please specify the target object in the "
                       "parameters.")  # fmt: skip
    pose: Any = params.get("target_pose", None)
    try:
        pose = ast.literal_eval(pose) if isinstance(pose, str) else pose
        pose = [float(i) for i in pose] if pose else None
        if len(pose) not in rules.place_lengths:
            return Outcome(f"Invalid target_pose length: {len(pose)}. Must be a list or tuple of "
                           f"{rules.place_length_text} numbers.")  # fmt: skip
    except Exception:
        return Outcome(f"Invalid target_pose format: {pose}. Must be a list or tuple of numbers.")
    if rules.refuse_function_point_id and params.get("function_point_id", None) is not None:
        return Outcome("Wrong arg name: function_point_id. It may be functional_point_id. Replanning!!!")
    fpid = params.get("functional_point_id", None)
    fpid = int(fpid) if isinstance(fpid, str) else fpid
    merged = dict(params)
    if rules.merge_kwargs:
        try:
            extra = params.get("kwargs", None)
            if extra is not None:
                merged.update(extra)
        except Exception:
            return Outcome("kwargs recognize failed!")
    pre, dis = _number(merged, "pre_dis", 0.1), _number(merged, "dis", 0.02)
    is_open = bool(merged.get("is_open", True))
    constrain = merged.get("constrain", rules.constrain_default)
    refused = task.place_refusal(world, target, pose)
    if refused is not None:
        return Outcome(refused, refused=True)
    if frozen:
        return Outcome(True)
    pose = _unit_quat(pose)
    named = rules.points.get(target, {}).get(fpid) if fpid is not None else None
    if named is not None:  # our functional point fpid is elsewhere: aim the original's point at the target
        obj = world.objects[target]
        shift = np.asarray(obj.point_world("fp0").p, dtype=float) - np.asarray(obj.point_world(named).p, dtype=float)
        pose = [*(np.asarray(pose[:3]) + shift).tolist(), *pose[3:]]
        fpid = 0
    try:
        result = world.skills.place_actor(target, _side(arm), pose, functional_point_id=fpid, pre_dis=pre, dis=dis,
                                          is_open=is_open, constrain=constrain)  # fmt: skip
    except Exception as e:
        return Outcome(f"Placing failed for {arm} arm: {e}")
    if result.ok or result.kind == FailureKind.EXECUTION:  # the original does not check where the object went
        return Outcome(True, (result,))
    if result.kind in PLAN_FAILURES:
        return Outcome(True, (result,), froze=True)
    return Outcome(f"Placing failed for {arm} arm: {result.message}", (result,))


def _displace(world: BenchWorld, rules: TaskRules, params: Mapping[str, Any], arm: str, frozen: bool) -> Outcome:
    try:
        x, y, z = (_number(params, k, 0.0) for k in ("x", "y", "z"))
    except Exception as e:
        return Outcome(f"Invalid value of x or y or z:{e}")
    quat = params.get("quat", None)
    if isinstance(quat, list | tuple) and len(quat) == 4:
        quat = _unit_quat([0.0, 0.0, 0.0, *quat])[3:]
    move_axis = params.get("move_axis", "world")
    if arm in ("left", "right"):
        arms = [arm]
    elif rules.both_move == "together":
        arms = ["left", "right"]
    else:
        return Outcome(f'Moving by displacement failed for {arm} arm: arm_tag must be either "left" or "right", '
                       f"not {arm}")  # fmt: skip
    return _motions(world, arms, frozen, "Moving by displacement", arm,
                    lambda a: world.skills.move_by_displacement(a, x=x, y=y, z=z, quat=quat, move_axis=move_axis))


def _move_to_pose(task: BenchTask, world: BenchWorld, params: Mapping[str, Any], arm: str, frozen: bool) -> Outcome:
    pose: Any = params.get("target_pose", None)
    try:
        pose = ast.literal_eval(pose) if isinstance(pose, str) and task.name not in _MOVE_TEXT_UNPARSED else pose
        pose = [float(i) for i in pose] if pose else None
    except Exception:
        return Outcome(f"Invalid target_pose format: {pose}. Must be a list or tuple of numbers.")
    if len(pose) != 7:
        return Outcome(f"Invalid target_pose length: {len(pose)}. Must be a list or tuple of 7 numbers.")
    pose = _unit_quat(pose)
    return _motions(world, [arm], frozen, "Moving to pose", arm, lambda a: world.skills.move_to_pose(a, pose))


def parse_ee_item(item: Any) -> tuple[list[float] | None, str | None]:
    """A Tier 3 action as the original reads it: (16 numbers, None) or (None, its error message).

    A string is read as a literal list, else split at commas; each text element is computed (``arith``; NaN when
    it is not arithmetic). A NaN makes that arm's motion unplannable, as in the original.
    """
    try:
        obj = item
        if isinstance(obj, str):
            try:
                obj = ast.literal_eval(obj)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                obj = [x.strip() for x in obj.strip("[]").split(",")]
        if not isinstance(obj, list | tuple):
            obj = [obj]
        values = [evaluate(x) if isinstance(x, str) else float(x) for x in obj]
    except Exception as e:
        return None, f"Error when parsing action: {e}"
    if len(values) != 16:
        return None, f"Invalid action length: {len(values)}. Must be a list or tuple of 16 numbers."
    return values, None


def argument_problem(task: BenchTask, world: BenchWorld, action: Any) -> str | None:
    """Why an action the executor would run has a malformed argument (a number that is not finite, a zero
    quaternion, a pose of the wrong length, an id that is not a number), checked as the skills check it after the
    original's own readings (unknown keys dropped, the object named by its substrings, a quaternion normalised, a
    gripper opening clipped); None when it is sound, and for what the executor answers itself without moving (an
    unknown action, arm tag or object, a pose written as text)."""
    if not isinstance(action, Mapping) or not isinstance(action.get("parameters", {}), Mapping):
        return None
    name = action.get("action_name")
    if name not in ACTION_PARAMETERS:
        return None
    rules = RULES[task.name]
    params = action.get("parameters", {})
    arm = params.get("arm_tag", "")
    arm = arm.lower() if rules.lower_arm_tag and isinstance(arm, str) else arm
    if arm not in ("left", "right"):
        return None
    kept: dict[str, Any] = {k: v for k, v in params.items() if k in ACTION_PARAMETERS[name]}
    actor = kept.get("actor")
    if isinstance(actor, str):
        match = resolve(rules, actor.lower())
        if match is None or match.missing or match.obj not in world.objects:
            return None
        kept["actor"] = match.obj
    if isinstance(kept.get("target_pose"), list):
        kept["target_pose"] = _unit_quat(kept["target_pose"])
    for key in ("pos", "gripper_pos"):
        if isinstance(kept.get(key), int | float) and math.isfinite(kept[key]):
            kept[key] = min(1.0, max(0.0, float(kept[key])))
    calls = prepare_action({"action_name": name, "parameters": {**kept, "arm_tag": arm}})
    if isinstance(calls, SkillResult):
        return None if isinstance(params.get("target_pose"), str) else calls.message
    bad = check_plan(calls, set(world.objects))
    return None if bad is None else bad[1].message


def chunk_argument_problem(task: BenchTask, world: BenchWorld, items: list[Any]) -> tuple[int, str] | None:
    """The first action of a chunk with a malformed argument (``argument_problem``) and why, checked for every
    action before the first runs; None when all are sound."""
    for i, item in enumerate(items):
        why = argument_problem(task, world, item)
        if why is not None:
            return i, why
    return None
