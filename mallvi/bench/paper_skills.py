"""The original benchmark's skill semantics on our simulator, for the paper protocol (and the expert measured
under it). mallvi's own skills (``sim_bridge.sim_skills``) are not changed; these wrap their parts:

* ``grasp_actor``: pre-grasp, straight approach, close. No lift after closing and no check that anything is held
  (the original returns success whatever the fingers closed on). An object between both fingers is held, as our
  simulator holds objects. When no candidate's pre-grasp can be planned, the arm has not moved and the grasp is
  a plain failure; when a pre-grasp was reached but the approach failed, it is a failed motion plan.
* ``ee_action`` (Tier 3): each arm is planned on its own; an arm whose target cannot be planned (or that the safety
  guard refuses) stays where it is while its gripper still moves, and the action counts as executed. The task's
  success is checked after every physics step and the motion stops at the first step where it holds.

Both work with the world's ``SimSkills`` parts (simulator truth and motion), which only the simulator has.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from mallvi.bench.tasks.task_base import BenchTask, BenchWorld
from mallvi.contracts.geometry import ARM_SIDES, ArmSide, Pose
from mallvi.contracts.skills import Failure, FailureKind, SkillResult
from mallvi.robot_drivers.safety.skill_args import resolve_arm, resolve_object
from mallvi.sim_bridge import layout
from mallvi.sim_bridge.grasp_frames import grasp_frames
from mallvi.sim_bridge.planning import PlanResult
from mallvi.sim_bridge.sim_devices import SETTLE_STEPS, path_velocities, resample_path
from mallvi.sim_bridge.skill_parts import SkillParts

#: physics steps an arm whose target could not be planned spends moving only its gripper (the original's 50)
UNPLANNED_STEPS = 50
#: joint travel (rad, summed) above which an arm counts as having moved
MOVED_RAD = 1e-3


def skill_parts(world: BenchWorld) -> SkillParts:
    """The simulator's skill parts; TypeError for a world without them (the paper semantics need the simulator)."""
    parts = getattr(world.skills, "parts", None)
    if not isinstance(parts, SkillParts):
        raise TypeError("the original benchmark's skill semantics need the simulator's skills")
    return parts


def grasp_actor(
    world: BenchWorld,
    actor: str,
    arm_tag: str,
    pre_grasp_dis: float = 0.1,
    grasp_dis: float = 0.0,
    gripper_pos: float = 0.0,
    contact_point_ids: Sequence[int] | None = None,
) -> SkillResult:
    """The original's grasp: reach a grasp of ``actor`` (any of ``contact_point_ids``), close, nothing more.

    Failures: ``UNREACHABLE`` with ``data["pre_grasp_unplannable"]`` when no pre-grasp pose could be planned
    (nothing moved); ``NO_PLAN`` when the arm reached a pre-grasp pose but no approach (a failed motion plan);
    ``BAD_PARAMETERS``/``REFUSED_BY_GUARD``/``WRONG_ARM`` before anything moves.
    """
    parts = skill_parts(world)
    side = resolve_arm(arm_tag)
    if isinstance(side, Failure):
        return side.result()
    info = resolve_object(parts.truth, actor)
    if isinstance(info, Failure):
        return info.result()
    why = parts.rig.guard.check_values("grasp parameters", [pre_grasp_dis, grasp_dis, gripper_pos])
    why = why or parts.rig.guard.check_gripper(side, gripper_pos)
    if why is not None:
        return SkillResult.failure(why, FailureKind.REFUSED_BY_GUARD, refused=True)
    held = parts.holder.held_by(side)
    if held is not None and held != info.name:
        return SkillResult.failure(f"the {side} arm already holds {held}", FailureKind.WRONG_ARM)
    frames: list[tuple[str, Pose]] = []
    for cid in contact_point_ids if contact_point_ids else [None]:
        got = grasp_frames(info, cid)
        if isinstance(got, str):
            return SkillResult.failure(got, FailureKind.BAD_PARAMETERS)
        frames += got
    arm = parts.arms[side]
    q0 = arm.joint_positions_rad()
    reasons: list[str] = []
    reached = None
    for closed in (False, True):  # open fingers first, then closed ones as the coarser check (as grasp_at)
        parts.motion.sync_planner(side, with_objects=True, exclude=frozenset({info.name}), opening=1.0,
                                  closed_fingers=closed)  # fmt: skip
        reached = parts.grasping.reach_grasp(side, info.name, frames, float(pre_grasp_dis), float(grasp_dis),
                                             reasons, closed)  # fmt: skip
        if reached is not None:
            break
    if reached is None:
        moved = float(np.abs(arm.joint_positions_rad() - q0).sum()) > MOVED_RAD
        text = f"no grasp of {info.name} for the {side} arm: " + "; ".join(reasons[:3])
        if moved:  # a pre-grasp pose was reached, the approach was not: a failed motion plan
            return SkillResult.failure(text, FailureKind.NO_PLAN)
        return SkillResult.failure(text, FailureKind.UNREACHABLE, pre_grasp_unplannable=True)
    parts.faults.grasp_closing(side, info.name)
    arm.set_gripper(float(gripper_pos))
    name, _ = parts.holder.try_hold(side)
    return SkillResult.success(grasp=reached[0], holding=name)


def _arm_target(values: Sequence[float]) -> tuple[Pose | None, str | None]:
    """An arm's 7 numbers as a pose (a quaternion off unit length is normalised, as the original's planner
    takes it), or None with why the arm cannot be sent there."""
    v = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(v)):
        return None, f"the target holds a value that is not a number: {v.tolist()}"
    n = float(np.linalg.norm(v[3:]))
    if n < 1e-6:
        return None, "the target's quaternion is zero"
    return Pose.from_arrays(v[:3], v[3:] / n), None


def ee_action(task: BenchTask, world: BenchWorld, values: Sequence[float]) -> SkillResult:
    """Run one 16-number action [left xyz, quat wxyz, gripper, right xyz, quat wxyz, gripper] as the original.

    Always ``ok`` (an arm that cannot go stays); ``data["stayed"]`` names such arms with the reason,
    ``data["succeeded"]`` is True when the task's success held at some physics step (the motion stopped there).
    """
    parts = skill_parts(world)
    if len(values) != 16:
        raise ValueError(f"an end-effector action has 16 numbers, got {len(values)}")
    guard = parts.rig.guard
    targets: dict[ArmSide, Pose] = {}
    grippers: dict[ArmSide, float] = {}
    stayed: dict[str, str] = {}
    for i, side in enumerate(ARM_SIDES):
        chunk = [float(v) for v in values[8 * i : 8 * i + 8]]
        g = chunk[7]
        grippers[side] = float(np.clip(g, 0.0, 1.0)) if math.isfinite(g) else parts.arms[side].gripper_opening()
        target, why = _arm_target(chunk[:7])
        if target is None:
            stayed[side] = why or "no target"
            continue
        targets[side] = target
    if len(targets) == 2:
        clash = guard.check_clearance("left", targets["left"], targets["right"])
        if clash is not None:  # the guard keeps the arms apart: the right arm, planned second, stays
            stayed["right"] = clash
            del targets["right"]
    plans: dict[ArmSide, PlanResult] = {}
    for side, target in targets.items():
        plan = parts.motion.plan(side, target, "straight_then_free", opening=grippers[side])
        if isinstance(plan, Failure):
            stayed[side] = plan.message
        else:
            plans[side] = plan
    for side in ARM_SIDES:
        if grippers[side] > parts.arms[side].gripper_opening() + 1e-6:
            parts.holder.release(side)
    succeeded = _track(task, world, parts, plans, grippers)
    if not succeeded:
        for side in ARM_SIDES:
            parts.arms[side].set_gripper(grippers[side])  # let the fingers finish their travel
            if grippers[side] < 0.5 and parts.holder.held_by(side) is None:
                parts.holder.try_hold(side)
        succeeded = task.check_success(world)
    held = {s: parts.holder.held_by(s) for s in ARM_SIDES}
    message = "; ".join(f"the {s} arm stayed: {why}" for s, why in stayed.items()) or "Action succeeded."
    return SkillResult(True, message, {"stayed": dict(stayed), "succeeded": succeeded, "held": held})


def _track(task: BenchTask, world: BenchWorld, parts: SkillParts, plans: dict[ArmSide, PlanResult],
           grippers: dict[ArmSide, float]) -> bool:  # fmt: skip
    """Track the planned arms together (an unplanned arm moves only its gripper, over ``UNPLANNED_STEPS``),
    checking the task's success after every physics step; True as soon as it holds (the motion stops there)."""
    dt = layout.PHYSICS_DT_S
    dense = {s: resample_path(p.path_rad, p.dt_s, dt) for s, p in plans.items()}
    vel = {s: path_velocities(d, dt) for s, d in dense.items()}
    steps = {s: len(dense[s]) if s in dense else UNPLANNED_STEPS for s in ARM_SIDES}
    start = {s: parts.arms[s].gripper_opening() for s in ARM_SIDES}
    n = max(steps.values())
    for i in range(n + SETTLE_STEPS):
        for s in ARM_SIDES:
            if s in dense:
                d = dense[s]
                k = min(i, len(d) - 1)
                parts.arms[s].set_joint_targets(d[k], vel[s][k] if i < len(d) - 1 else None)
            frac = min(1.0, (i + 1) / steps[s])
            parts.arms[s].set_gripper_target(start[s] + frac * (grippers[s] - start[s]))
        parts.step(1)
        if task.check_success(world):
            return True
    return False
