"""Guarded motion execution on the simulated arms: plan, check with the SafetyGuard, then track.

Every arm motion of ``SimSkills`` goes through ``Motion``: the target pose is checked (NaN, workspace, table
plane, step size), planned with mplib (the other arm, scene objects and the held object as obstacles), the joint
path is checked (limits, jumps) and only then tracked by the PD drives. Each failure is returned as a typed
``Failure``: ``REFUSED_BY_GUARD`` (the guard said no), ``UNREACHABLE`` (no inverse-kinematics solution) or
``NO_PLAN`` (no collision-free path). ``Motion`` takes the rig, the object registry and the clock, not the world.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import sapien
from numpy.typing import NDArray

from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.contracts.skills import Failure, FailureKind
from mallvi.robot_drivers.safety.guard import refused
from mallvi.sim_bridge import layout
from mallvi.sim_bridge.planning import RRT_SEARCHES, ArmPlanner, PlanResult
from mallvi.sim_bridge.scene_spec import SimObject
from mallvi.sim_bridge.sim_devices import SETTLE_STEPS, path_velocities, resample_path
from mallvi.sim_bridge.skill_ports import Clock, Objects, Rig

PlanKind = Literal["free", "straight", "straight_then_free"]
OBSTACLE_SHRINK_M = 0.006  # obstacle boxes lose this much per side so resting contacts are not collisions
#: a free move is first planned with the object boxes this much larger per side than the objects (a margin for
#: the planner's boxes and the tracked path); where the start or goal has no such room, with a narrower margin,
#: then with the shrunk boxes
FREE_MOVE_MARGIN_M = 0.015
#: then with this smaller margin (a can carried in over the rim of the box it goes into has no path 1.5 cm clear
#: of it, and the shrunk boxes let it clip the rim and shove the box)
NARROW_MARGIN_M = 0.004
#: a free move's planning passes, in turn: (box margin per side, grippers planned closed, RRT searches). The
#: last, closed, pass is for a gripper that opened beside what it let go of (its open fingers start in the
#: shrunk boxes of a placed can's neighbours or a bin's wall) and is tried only where they do: open fingers
#: planned closed elsewhere sweep through what stands beside the path
FREE_PASSES = ((FREE_MOVE_MARGIN_M, False, 3), (NARROW_MARGIN_M, False, RRT_SEARCHES), (0.0, False, RRT_SEARCHES),
               (0.0, True, RRT_SEARCHES))


@dataclass
class MotionStats:
    """Counters for figures: how long planning and motions took."""

    plans: int = 0
    planning_s: float = 0.0
    moved_s: float = 0.0


def _bbox_center(obj: SimObject) -> sapien.Pose:
    """The object's bounding-box centre in its own frame (objects library: origin at the bottom centre)."""
    return obj.local_points.get("bbox_center", sapien.Pose([0.0, 0.0, obj.size_m[2] / 2]))


class Motion:
    """Plans and executes guarded arm motions of the simulated rig."""

    def __init__(self, rig: Rig, planners: Mapping[ArmSide, ArmPlanner], objects: Objects, clock: Clock) -> None:
        self.rig = rig
        self.planners = planners
        self.objects = objects
        self.clock = clock
        self.stats = MotionStats()
        self.plan_log: list[PlanResult] = []

    def _other(self, side: ArmSide) -> ArmSide:
        return "right" if side == "left" else "left"

    def sync_planner(self, side: ArmSide, with_objects: bool, exclude: frozenset[str] = frozenset(),
                     opening: float | None = None, margin_m: float = 0.0, closed_fingers: bool = False,
                     margins_m: Mapping[str, float] | None = None) -> None:
        """Bring the planner's world up to date: both arms' fingers, other arm, scene objects (minus ``exclude``),
        held object. ``opening`` (0..1): the gripper will open this far during the motion (see ``fingers_m``);
        ``margin_m``: object boxes this much larger per side than the objects (else shrunk by
        ``OBSTACLE_SHRINK_M``); ``closed_fingers``: both grippers planned closed, whatever they are (a coarser
        check for where the object boxes, larger than the objects, leave open fingers no room); ``margins_m``:
        another margin for the objects it names (0: shrunk)."""
        rig = self.rig
        planner = self.planners[side]
        other = self._other(side)
        closed = np.zeros(len(rig.embodiment.finger_joints))
        other_fingers = closed if closed_fingers else self.fingers_m(other)
        planner.set_other_arm(rig.arms[other].joint_positions_rad(), other_fingers)
        planner.set_fingers(closed if closed_fingers else self.fingers_m(side, opening))
        held = rig.holder.held_by(side)
        boxes: dict[str, tuple[tuple[float, float, float], Pose]] = {}
        if with_objects:
            for name, obj in self.objects.bodies.items():
                if name == held or name in exclude or rig.holder.holder_of(name) is not None:
                    continue
                m = (margins_m or {}).get(name, margin_m)
                grow = m if m > 0.0 else -OBSTACLE_SHRINK_M
                size = tuple(max(0.004, s + 2 * grow) for s in obj.size_m)
                p = obj.entity.get_pose() * _bbox_center(obj)
                boxes[name] = ((size[0], size[1], size[2]), Pose.from_arrays(p.p, p.q))
        planner.set_object_boxes(boxes)
        attached = rig.holder.held_pose_in_ee(side)
        if attached is None:
            planner.detach()
        else:
            size_m, rel = attached
            rel = rel * _bbox_center(self.objects.bodies[held]) if held is not None else rel
            # shrunk like the objects (a tilted object's box dips into the surface it is set on), except in a
            # margin pass, where it has its own size; what it touches as the motion starts may stay touched
            size = tuple(float(s) if margin_m > 0.0 else float(max(0.004, s - 2 * OBSTACLE_SHRINK_M)) for s in size_m)
            planner.attach_box(held or "held", (size[0], size[1], size[2]), Pose.from_arrays(rel.p, rel.q),
                               rig.arms[side].joint_positions_rad())

    def fingers_m(self, side: ArmSide, opening: float | None = None) -> NDArray[np.float64]:
        """The widest each finger of ``side`` stands during a motion: where it is now, where it is commanded to go
        and ``opening`` (0..1, a gripper opened along the motion), in metres from closed."""
        arm = self.rig.arms[side]
        widest = max(arm.gripper_opening(), opening or 0.0) * self.rig.embodiment.finger_travel_m
        return np.maximum(arm.finger_positions_m(), widest)

    def plan(
        self, side: ArmSide, target: Pose, kind: PlanKind, exclude: frozenset[str] = frozenset(),
        opening: float | None = None, closed_fingers: bool = False,
    ) -> PlanResult | Failure:
        """Check ``target`` with the guard and plan to it; returns the plan or why there is none. ``opening``:
        the gripper opens this far (0..1) along the motion, so the planner has the fingers that wide;
        ``closed_fingers``: see ``sync_planner``."""
        arm = self.rig.arms[side]
        reason = self.rig.guard.check_pose(side, target, current=arm.ee_pose())
        if reason is not None:
            return refused(reason)
        q0 = arm.joint_positions_rad()
        planner = self.planners[side]
        result: PlanResult | None = None
        if kind in ("straight", "straight_then_free"):
            for closed in sorted({closed_fingers, True}):  # open fingers first, closed as the coarser check
                self.sync_planner(side, with_objects=False, opening=opening, closed_fingers=closed)
                result = planner.plan_straight(target, q0)
                self._record(result)
                if result.ok:
                    break
        if kind == "free" or (kind == "straight_then_free" and result is not None and not result.ok):
            result = self._plan_free(side, lambda n, free: planner.plan_to_pose(target, q0, n, free_start=free),
                                     exclude, opening, closed_fingers)
        assert result is not None
        if not result.ok:
            return Failure(_plan_failure_kind(result),
                           f"cannot move the {side} arm to {np.round(target.p, 3).tolist()}: {result.message}")
        return self._check_path(side, result)

    def clear_goal(self, side: ArmSide, q_goal: NDArray[np.float64],
                   rises_m: tuple[float, ...]) -> tuple[NDArray[np.float64], float, set[str]]:
        """``q_goal``, or, where a scene object stands in the way of the arm at ``q_goal`` (the left arm's home pose
        over a bottle set down in the bin below it), the joints that put the end-effector the first of ``rises_m``
        straight above where ``q_goal`` puts it that is clear. Returns the joints, the rise (m; 0.0 for ``q_goal``
        itself, also when no rise is clear) and the objects in the way."""
        planner = self.planners[side]
        self.sync_planner(side, with_objects=True)
        in_way = planner.colliding_objects(q_goal)
        if not in_way:
            return q_goal, 0.0, in_way
        top = planner.fk(q_goal)
        for rise_m in rises_m:
            above = Pose((top.position_m[0], top.position_m[1], top.position_m[2] + rise_m), top.quat_wxyz)
            q, _ = planner.ik(above, q_goal)
            if q is not None and not planner.in_collision(q):
                return q, rise_m, in_way
        return q_goal, 0.0, in_way

    def plan_joints(self, side: ArmSide, q_goal: NDArray[np.float64]) -> PlanResult | Failure:
        """RRT-Connect to a joint configuration (e.g. home), guard-checked."""
        reason = self.rig.guard.check_values(f"{side} joint target", q_goal)
        if reason is not None:
            return refused(reason)
        q0 = self.rig.arms[side].joint_positions_rad()
        planner = self.planners[side]
        result = self._plan_free(side, lambda n, free: planner.plan_to_qpos(q_goal, q0, n, free_start=free))
        if not result.ok:
            return Failure(_plan_failure_kind(result), f"cannot move the {side} arm to its joint target: "
                                                       f"{result.message}")
        return self._check_path(side, result)

    def _plan_free(self, side: ArmSide, search: Callable[[int, bool], PlanResult],
                   exclude: frozenset[str] = frozenset(), opening: float | None = None,
                   closed_fingers: bool = False) -> PlanResult:
        """A free move planned in the passes of ``FREE_PASSES`` until one finds a path; ``search(searches,
        free_start)`` plans in the planner's world as the pass set it. In a pass with a margin, the objects whose
        margin box the start already lies in (a raised gripper above a tall bottle) get the next smaller margin
        of the passes: the others keep theirs, and the pass does not fail at once for them."""
        planner = self.planners[side]
        q0 = self.rig.arms[side].joint_positions_rad()
        start_touches = False
        result: PlanResult | None = None
        for margin_m, closed, searches in _free_passes(closed_fingers):
            if closed and not closed_fingers and not start_touches:
                break
            self.sync_planner(side, with_objects=True, exclude=exclude, opening=opening, margin_m=margin_m,
                              closed_fingers=closed)
            near = planner.colliding_objects(q0) if margin_m > 0.0 else set()
            if near:
                smaller = _smaller_margin_m(margin_m)
                self.sync_planner(side, with_objects=True, exclude=exclude, opening=opening, margin_m=margin_m,
                                  closed_fingers=closed, margins_m=dict.fromkeys(near, smaller))
            result = search(searches, margin_m > 0.0)
            self._record(result)
            if result.ok:
                break
            start_touches = planner.in_collision(q0)
        assert result is not None
        return result

    def _record(self, result: PlanResult) -> None:
        self.stats.plans += 1
        self.stats.planning_s += result.planning_s
        self.plan_log.append(result)
        if len(self.plan_log) > 1000:
            del self.plan_log[:500]

    def _check_path(self, side: ArmSide, result: PlanResult) -> PlanResult | Failure:
        reason = self.rig.guard.check_joint_path(side, result.path_rad, result.dt_s)
        return refused(reason) if reason is not None else result

    def execute(
        self,
        plans: Mapping[ArmSide, PlanResult],
        gripper_to: Mapping[ArmSide, float] | None = None,
    ) -> None:
        """Track one or two plans together, interpolating gripper commands linearly along the motion."""
        arms, clock = self.rig.arms, self.clock
        dt = layout.PHYSICS_DT_S
        dense = {s: resample_path(p.path_rad, p.dt_s, dt) for s, p in plans.items()}
        vel = {s: path_velocities(d, dt) for s, d in dense.items()}
        n = max(len(d) for d in dense.values())
        grip_from = {s: arms[s].gripper_opening() for s in (gripper_to or {})}
        for i in range(n):
            for s, d in dense.items():
                k = min(i, len(d) - 1)
                arms[s].set_joint_targets(d[k], vel[s][k] if i < len(d) - 1 else None)
            for s, g in (gripper_to or {}).items():
                frac = (i + 1) / n
                arms[s].set_gripper_target(grip_from[s] + frac * (g - grip_from[s]))
            clock.step(1)
        clock.step(SETTLE_STEPS)
        self.stats.moved_s += (n + SETTLE_STEPS) * dt

    def move(
        self, side: ArmSide, target: Pose, kind: PlanKind, exclude: frozenset[str] = frozenset(),
        closed_fingers: bool = False,
    ) -> Failure | None:
        """Plan and execute one arm's motion; None on success, else why not (nothing moved)."""
        plan = self.plan(side, target, kind, exclude, closed_fingers=closed_fingers)
        if isinstance(plan, Failure):
            return plan
        self.execute({side: plan})
        return None


def _smaller_margin_m(margin_m: float) -> float:
    """The largest margin of ``FREE_PASSES`` below ``margin_m`` (0: the shrunk boxes)."""
    return max((m for m, _, _ in FREE_PASSES if m < margin_m), default=0.0)


def _free_passes(closed_fingers: bool) -> tuple[tuple[float, bool, int], ...]:
    """``FREE_PASSES``, or, when the caller asked for closed fingers, its open-finger passes with them closed."""
    if not closed_fingers:
        return FREE_PASSES
    return tuple((margin_m, True, searches) for margin_m, closed, searches in FREE_PASSES if not closed)


def _plan_failure_kind(result: PlanResult) -> FailureKind:
    """``UNREACHABLE`` when the planner found no inverse-kinematics solution, else ``NO_PLAN``."""
    return FailureKind.UNREACHABLE if result.no_ik else FailureKind.NO_PLAN
