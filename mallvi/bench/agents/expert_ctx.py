"""The expert's toolkit: run primitives through the benchmark's executor, with budget and success checks.

``semantics`` is the executor's (``bench.actions``). Under "paper" (the original's skills) a grasp neither lifts nor
checks: the expert, privileged, checks the hold itself and lifts with an explicit ``move_by_displacement`` of
``GRASP_LIFT_M``, as a model would (both count against its budget); a Tier 3 action in which an arm could not go
is a failure to the expert (the trace records what the executor answered).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mallvi.bench.actions import execute_action, execute_ee_action, make_action
from mallvi.bench.agents.agent_protocols import EpisodeStats
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, pos
from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.contracts.skills import FailureKind, SkillResult
from mallvi.sim_bridge.sim_skills import GRASP_LIFT_M
from mallvi.tracing.trace import TraceWriter


class SolvedSignal(Exception):  # noqa: N818 - a control-flow signal, not an error
    """The task succeeded: stop the script."""


class OutOfBudgetError(Exception):
    """The script used the episode's action budget (turns × chunk)."""


class ExpertContext:
    """Runs an expert script's actions one by one through the same executor and skills as any planner."""

    def __init__(self, task: BenchTask, world: BenchWorld, trace: TraceWriter, budget: int,
                 semantics: str = "mallvi") -> None:  # fmt: skip
        self.task, self.world, self.trace = task, world, trace
        self.stats = EpisodeStats()
        self.budget = budget
        self.semantics = semantics

    # -- raw actions -------------------------------------------------------------------------------------------
    def do(self, name: str, **params: Any) -> SkillResult:
        """One Tier 2 primitive; raises SolvedSignal as soon as the task succeeds."""
        if name == "grasp_actor" and self.semantics == "paper":
            return self._paper_grasp(params)
        return self._run(make_action(name, **params),
                         lambda a: execute_action(self.task, self.world, a, self.semantics))  # fmt: skip

    def ee(self, action: Sequence[float]) -> SkillResult:
        """One Tier 3 16-dim action; raises SolvedSignal as soon as the task succeeds."""
        result = self._run(list(action), lambda a: execute_ee_action(self.world, a, self.semantics, self.task))
        stayed = result.data.get("stayed") if result.ok else None
        if stayed:
            return SkillResult.failure(result.message, FailureKind.NO_PLAN, stayed=stayed)
        return result

    def _paper_grasp(self, params: dict[str, Any]) -> SkillResult:
        """The original's grasp, then what mallvi's grasp adds, as the expert's own steps: the hold checked
        (privileged), a missed grasp opened and backed off, a fresh hold lifted ``GRASP_LIFT_M``."""
        actor, arm = str(params["actor"]), params["arm_tag"]
        other: ArmSide = "right" if arm == "left" else "left"
        handover = self.holder(other) == actor
        result = self._run(make_action("grasp_actor", **params),
                           lambda a: execute_action(self.task, self.world, a, "paper"))  # fmt: skip
        if not result.ok:
            return result
        held = self.holder(arm)
        if held != actor:  # closed on nothing or on something else: let go and back off to the pre-grasp
            self._run(make_action("open_gripper", arm_tag=arm), lambda a: execute_action(self.task, self.world, a))
            back = float(params.get("pre_grasp_dis", 0.1)) - float(params.get("grasp_dis", 0.0))
            self._run(make_action("move_by_displacement", arm_tag=arm, x=-back, move_axis="arm"),
                      lambda a: execute_action(self.task, self.world, a))  # fmt: skip
            kind = FailureKind.GRASP_EMPTY if held is None else FailureKind.GRASP_OFF_TARGET
            return SkillResult.failure(f"grasp of {actor} failed: it is not between the fingers", kind)
        if handover:
            return result
        lift = self._run(make_action("move_by_displacement", arm_tag=arm, z=GRASP_LIFT_M),
                         lambda a: execute_action(self.task, self.world, a))  # fmt: skip
        if not lift.ok:
            return SkillResult.failure(f"grasped {actor} but could not lift it: {lift.message}",
                                       lift.kind or FailureKind.OTHER)  # fmt: skip
        return result

    def _run(self, action: Any, runner: Any) -> SkillResult:
        if self.stats.actions >= self.budget:
            raise OutOfBudgetError(f"used all {self.budget} actions")
        result: SkillResult = runner(action)
        self.stats.actions += 1
        if not result.ok:
            self.stats.failed_actions += 1
            self.stats.refusals += int(bool(result.data.get("refused")))
        if isinstance(action, dict):
            p = action["parameters"]
            self.trace.emit("actor_command", arm=p.get("arm_tag"), skill=action["action_name"], args=p,
                            ok=result.ok, message=result.message)  # fmt: skip
        else:
            self.trace.emit("actor_command", arm="both", skill="execute_ee_action", args=action, ok=result.ok,
                            message=result.message)  # fmt: skip
        if self.task.check_success(self.world):
            raise SolvedSignal()
        return result

    # -- Tier 2 helpers ----------------------------------------------------------------------------------------
    def near_arm(self, name: str) -> ArmSide:
        return "left" if pos(self.world, name)[0] < 0 else "right"

    def pick(self, name: str, arms: Sequence[ArmSide] | None = None, **kw: Any) -> ArmSide | None:
        """Grasp with the nearer arm, then the other one if allowed; the arm that holds it, or None."""
        near = self.near_arm(name)
        order: Sequence[ArmSide] = arms or (near, "right" if near == "left" else "left")
        for arm in order:
            if self.task.allocation_refusal(self.world, name, arm) is not None:
                continue
            r = self.do("grasp_actor", actor=name, arm_tag=arm, **kw)
            if r.ok:
                return arm
            if r.kind == FailureKind.GRASP_OFF_TARGET and "contact_point_id" not in kw:  # try the other points
                for cp in self._contact_points(name):
                    if self.do("grasp_actor", actor=name, arm_tag=arm, contact_point_id=cp, **kw).ok:
                        return arm
            self.do("back_to_origin", arm_tag=arm)
        return None

    def _contact_points(self, name: str) -> list[int]:
        keys = [k[2:] for k in self.world.objects[name].local_points if k.startswith("cp") and k[2:].isdigit()]
        return sorted(int(k) for k in keys)[:4]

    def place(self, name: str, arm: ArmSide, target: Sequence[float], **kw: Any) -> bool:
        """Place the held object's bottom centre at ``target`` (xyz), turned about z so the arm can reach it."""
        kw.setdefault("functional_point_id", 0)
        target_list = [float(v) for v in target]
        if len(target) != 3 or kw.get("constrain", "auto") == "free":
            return self.do("place_actor", actor=name, arm_tag=arm, target_pose=target_list, **kw).ok
        tried = False
        for yaw in self._reachable_place_yaws(name, arm, target_list, kw.get("pre_dis", 0.1), kw.get("dis", 0.02)):
            # IK at both ends does not promise a path: the next yaw while the arm still holds the object
            if tried and self.holder(arm) != name:
                return False
            tried = True
            quat = [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
            if self.do("place_actor", actor=name, arm_tag=arm, target_pose=target_list + quat,
                       **{**kw, "constrain": "align"}).ok:  # fmt: skip
                return True
        if tried:
            return False
        return self.do("place_actor", actor=name, arm_tag=arm, target_pose=target_list, **kw).ok

    def place_in_turn(self, name: str, arm: ArmSide, tries: Sequence[tuple[Sequence[float], dict[str, Any]]]) -> bool:
        """Place the held ``name`` at each (target, place keywords) of ``tries`` in turn until one works or the arm
        no longer holds it; lets go where it is if none worked, then sends the arm home. True if one worked."""
        placed = False
        for target, kw in tries:
            if self.holder(arm) != name:
                break
            if self.place(name, arm, target, **kw):
                placed = True
                break
        if self.holder(arm) == name:
            self.do("open_gripper", arm_tag=arm)
        self.do("back_to_origin", arm_tag=arm)
        return placed

    def can_place(self, name: str, arm: ArmSide, target: Sequence[float], pre_dis: float, dis: float) -> bool:
        """Whether ``arm`` (holding ``name``) has IK for a pre-place and place pose at ``target``, at some yaw."""
        return next(self._reachable_place_yaws(name, arm, [float(v) for v in target], pre_dis, dis), None) is not None

    def holder(self, arm: ArmSide) -> str | None:
        """What ``arm`` holds now (privileged), or None."""
        world: Any = self.world  # privileged: the simulator's grasp record
        try:
            holder: str | None = world.skills.parts.holder.held_by(arm)
            return holder
        except AttributeError:
            return None

    def _reachable_place_yaws(
        self, name: str, arm: ArmSide, target: list[float], pre_dis: float, dis: float
    ) -> Iterator[float]:
        """Object yaws (rad) at the target for which the arm's pre-place and place poses have IK solutions."""
        world: Any = self.world  # privileged: the simulator's arms and planners
        try:
            T_obj = np.asarray(world.objects[name].pose.to_transformation_matrix())
            fp = np.asarray(world.objects[name].point_world("fp0").p)
            T_ee = world.arms[arm].ee_pose().as_matrix()
            q_now = world.arms[arm].joint_positions_rad()
            planner = world.planners[arm]
            sync = world.skills.motion.sync_planner
        except (AttributeError, KeyError):
            return
        yaw0 = math.atan2(T_obj[1, 0], T_obj[0, 0])
        fp_in_obj = T_obj[:3, :3].T @ (fp - T_obj[:3, 3])
        for delta in (0.0, math.pi / 2, -math.pi / 2, math.pi):
            c, s = math.cos(delta), math.sin(delta)
            Rz = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
            T_new = np.eye(4)
            T_new[:3, :3] = Rz @ T_obj[:3, :3]
            T_new[:3, 3] = np.asarray(target) - T_new[:3, :3] @ fp_in_obj
            T_ee_new = T_new @ np.linalg.inv(T_obj) @ T_ee
            ok = True
            for back, with_objects in ((pre_dis, True), (dis, False)):  # as place_actor plans: free, then straight
                sync(arm, with_objects=with_objects)
                T = T_ee_new.copy()
                T[:3, 3] = T_ee_new[:3, 3] - back * T_ee_new[:3, 0]
                sol, _ = planner.ik(Pose.from_matrix(T), q_now)
                if sol is None:
                    ok = False
                    break
            if ok:
                yield yaw0 + delta

    def move_object(self, name: str, target: Sequence[float], arms: Sequence[ArmSide] | None = None, **kw: Any) -> bool:
        """Pick ``name``, put its bottom centre at ``target``, send the arm home. True if every step worked."""
        arm = self.pick(name, arms)
        if arm is None:
            return False
        ok = self.place(name, arm, target, **kw)
        if not ok:
            self.do("open_gripper", arm_tag=arm)  # let go rather than carry it into the next step
        self.do("back_to_origin", arm_tag=arm)
        return ok

    def home(self, *arms: ArmSide) -> None:
        for a in arms or ("left", "right"):
            self.do("back_to_origin", arm_tag=a)


def vec(values: Sequence[float] | NDArray[np.float64]) -> list[float]:
    return [float(v) for v in values]


def up(p: Sequence[float] | NDArray[np.float64], dz_m: float) -> list[float]:
    """``p`` raised by ``dz_m`` metres, as a plain list."""
    return [float(p[0]), float(p[1]), float(p[2]) + dz_m]
