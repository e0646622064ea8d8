"""RigSkills: the SkillAPI primitives on a real DualArm, with object positions from a WorldModel (perception).

Grasps are top-down at the object's perceived position: open, move above the object, straight down, close,
check that something is between the fingers, lift. Every motion is an end-effector path (straight line,
slerped orientation) that the SafetyGuard checks in full before the first command is sent: workspace, table,
step and speed limits, clearance from the other arm, and, when a point-cloud source is given, the depth cloud.
With ``dry_run`` nothing is sent; the planned commands are returned in ``SkillResult.data["commands"]``.
A driver fault or Ctrl-C stops both arms (``DualArm.stop_all``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.contracts.devices import DualArm
from mallvi.contracts.errors import DriverError
from mallvi.contracts.geometry import ArmSide, Pose, quat_problem
from mallvi.contracts.skills import Failure, FailureKind, SkillResult, parse_pose_list
from mallvi.contracts.world_model import ObjectInfo, WorldModel
from mallvi.robot_drivers.rig_skills.config_rig_skills import Command, RigSkillsConfig
from mallvi.robot_drivers.rig_skills.rig_geometry import (
    pose_from,
    top_down_rotation,
)
from mallvi.robot_drivers.rig_skills.rig_motion import (
    SUPPORT_HALF_XY_M,
    CartesianArm,
    JointPlanner,
    RigMotionCore,
    support_box,
)
from mallvi.robot_drivers.rig_skills.rig_upright import stand_up_on_rig
from mallvi.robot_drivers.safety.guard import SafetyGuard, refused
from mallvi.robot_drivers.safety.skill_args import (
    as_number,
    as_numbers,
    first_failure,
    gripper_args,
    is_index,
    resolve_arm,
    resolve_object,
)

log = logging.getLogger(__name__)

__all__ = ["CartesianArm", "Command", "RigSkills", "RigSkillsConfig"]


SQUARE_TOLERANCE_M = 0.01  # footprint sides closer than this: the grasp may turn by 90 degrees


def is_square(half_size_m: NDArray[np.float64]) -> bool:
    """Whether an object's footprint (half extents x, y) is square enough to be grasped across either side."""
    return abs(2 * (float(half_size_m[0]) - float(half_size_m[1]))) < SQUARE_TOLERANCE_M


@dataclass
class _Held:
    name: str
    grasp_height_m: float  # grasp centre above the object's bottom


@dataclass
class RigSkills(RigMotionCore):
    """The SkillAPI on a real dual-arm rig (see module docstring); its motion core is ``RigMotionCore``.

    Args:
        dual_arm: the two arms (e.g. two PiperArm); arms must implement ``follow_ee_path``.
        world_model: resolves object names to perceived positions and sizes.
        guard: the safety guard in front of every motion.
        planner: optional joint-space planner hook ``(side, ee_path, q_start, dt_s) -> joint path | reason``
            (e.g. ``MplibRigPlanner``); when given, moves are sent as joint paths (``follow_joint_path``) after
            the guard's joint-path check.
        cloud_world: optional callable returning the current obstacle point cloud (N×3, world frame).
    """

    dual_arm: DualArm
    world_model: WorldModel
    guard: SafetyGuard
    planner: JointPlanner | None = None
    config: RigSkillsConfig = field(default_factory=RigSkillsConfig)
    cloud_world: Callable[[], NDArray[np.float64]] | None = None
    _held: dict[str, _Held] = field(default_factory=dict, init=False, repr=False)
    _virtual: dict[str, Pose] = field(default_factory=dict, init=False, repr=False)
    _virtual_gripper: dict[str, float] = field(default_factory=dict, init=False, repr=False)

    def held_object(self, side: ArmSide) -> str | None:
        """The object this arm's last grasp closed on (the gripper stayed open wider than an empty close), None
        when the gripper holds nothing."""
        held = self._held.get(side)
        return held.name if held is not None else None

    def held_drop_m(self, side: ArmSide) -> float:
        """How far the held object reaches below the grasp centre: its grasp height (0 when nothing is held)."""
        held = self._held.get(side)
        return held.grasp_height_m if held is not None else 0.0

    def mark_held(self, side: ArmSide, name: str, grasp_height_m: float) -> None:
        """``side`` now holds ``name`` with the grasp centre ``grasp_height_m`` above the object's bottom."""
        self._held[side] = _Held(name, grasp_height_m)

    def grasp_yaws(self, side: ArmSide, target: NDArray[np.float64], yaw_rad: float, square: bool) -> list[float]:
        """The finger directions a top-down grasp may take, the arm's preferred first: the object's yaw and the
        same turned by pi (the fingers are symmetric) and, for a square footprint, both turned by pi/2."""
        bases = [yaw_rad, yaw_rad + math.pi / 2] if square else [yaw_rad]
        yaws = []
        for base in bases:
            first = self.reachable_yaw(side, target, base)
            yaws += [first, first + math.pi]
        return yaws

    def _side_and_object(self, arm_tag: object, name: object) -> tuple[ArmSide, ObjectInfo] | SkillResult:
        side = resolve_arm(arm_tag)
        if isinstance(side, Failure):
            return side.result()
        info = resolve_object(self.world_model, name)
        return info.result() if isinstance(info, Failure) else (side, info)

    def _free_arm(self, side: ArmSide, values: Sequence[tuple[str, object]]) -> list[float] | SkillResult:
        """A grasp's numeric parameters checked (numbers the guard accepts) and the arm's gripper free."""
        nums = [as_number(v, name) for name, v in values]
        bad = first_failure(*nums)
        if bad is not None:
            return bad.result()
        floats = [v for v in nums if not isinstance(v, Failure)]
        why = self.guard.check_values("grasp parameters", floats)
        if why is not None:
            return refused(why).result()
        if side in self._held:
            return SkillResult.failure(f"the {side} arm already holds {self._held[side].name}; place it first",
                                       FailureKind.WRONG_ARM)
        return floats

    # ---- SkillAPI ----------------------------------------------------------------------------------------------
    def grasp_actor(self, actor: str, arm_tag: ArmSide, pre_grasp_dis: float = 0.1, grasp_dis: float = 0.0,
                    gripper_pos: float = 0.0, contact_point_id: int | None = None) -> SkillResult:
        """Top-down grasp at the perceived object position (``contact_point_id`` is checked but not used on the
        rig)."""
        if contact_point_id is not None and not is_index(contact_point_id):
            return SkillResult.failure(f"contact_point_id must be an integer, got {contact_point_id!r}",
                                       FailureKind.BAD_PARAMETERS)
        resolved = self._side_and_object(arm_tag, actor)
        if isinstance(resolved, SkillResult):
            return resolved
        side, info = resolved
        checked = self._free_arm(side, [("pre_grasp_dis", pre_grasp_dis), ("grasp_dis", grasp_dis),
                                        ("gripper_pos", gripper_pos)])
        if isinstance(checked, SkillResult):
            return checked
        pre_m, grasp_m, grip = checked
        centre = info.pose.p
        half = np.asarray(info.size_m, dtype=float) / 2.0
        grasp_z = max(centre[2], centre[2] + half[2] - self.config.grasp_below_top_m)
        yaw = float(Rotation.from_quat([*info.pose.q[1:], info.pose.q[0]]).as_euler("zyx")[0])
        if half[1] < half[0]:  # close the fingers across the narrower side
            yaw += math.pi / 2
        tcp = self.guard.config.tcp_offset_m
        grasp_centre = np.array([centre[0], centre[1], grasp_z])

        def grasp_poses(yaw_rad: float) -> tuple[Pose, Pose, Pose]:
            R = top_down_rotation(yaw_rad)
            grasp = pose_from(grasp_centre + np.array([0, 0, tcp + grasp_m]), R)
            return (pose_from(grasp_centre + np.array([0, 0, tcp + pre_m]), R), grasp,
                    pose_from(grasp.p + np.array([0, 0, self.config.lift_m]), R))

        candidates = [grasp_poses(y) for y in self.grasp_yaws(side, centre, yaw, square=is_square(half))]
        ee_pre, ee_grasp, ee_lift = next((c for c in candidates if self.can_reach(side, c)), candidates[0])
        footprint_m = max(half[0], half[1]) + 0.01
        target_box = [(centre, half + 0.01), support_box(centre[:2], centre[2] - half[2], footprint_m)]

        def body(log_: list[Command]) -> SkillResult:
            steps: list[Callable[[], Failure | None]] = [
                lambda: self.command_gripper(side, 1.0, log_, "open"),
                lambda: self.move_straight(side, ee_pre, log_, "pre-grasp", ignore=target_box),
                lambda: self.move_straight(side, ee_grasp, log_, "approach", ignore=target_box),
                lambda: self.command_gripper(side, grip, log_, "close"),
            ]
            for step in steps:  # one after the other; stop at the first refusal
                why = step()
                if why is not None:
                    return why.result()
            opening = self.gripper_opening(side)
            if not self.config.dry_run and opening < max(self.config.min_grasp_opening, grip + 0.02):
                self.command_gripper(side, 1.0, log_, "release")
                self.move_straight(side, ee_pre, log_, "retreat", ignore=target_box)
                return SkillResult.failure(f"grasp of {actor} failed: the {side} gripper closed on nothing "
                                           f"(opening {opening:.2f})", FailureKind.GRASP_EMPTY)
            self.mark_held(side, info.name, float(grasp_z - (centre[2] - half[2])))
            why = self.move_straight(side, ee_lift, log_, "lift", ignore=target_box)
            if why is not None:
                return why.result(f"grasped {actor} but could not lift it: ")
            return SkillResult.success(object=actor, arm=side)

        return self.run(body)

    def upright_actor(self, actor: str, arm_tag: ArmSide, pre_grasp_dis: float = 0.1) -> SkillResult:
        """Stand up an object lying on its side by a gravity pivot in a loosened grip (see ``rig_upright.py``);
        the arm ends holding it upright, ready for ``place_actor``."""
        resolved = self._side_and_object(arm_tag, actor)
        if isinstance(resolved, SkillResult):
            return resolved
        side, info = resolved
        checked = self._free_arm(side, [("pre_grasp_dis", pre_grasp_dis)])
        if isinstance(checked, SkillResult):
            return checked
        return stand_up_on_rig(self, lambda a, s, d: self.grasp_actor(a, s, pre_grasp_dis=d), side, info.name, info,
                               checked[0])

    def place_actor(self, actor: str, arm_tag: ArmSide, target_pose: Sequence[float],
                    functional_point_id: int | None = None, pre_dis: float = 0.1, dis: float = 0.02,
                    is_open: bool = True, constrain: Literal["free", "align", "auto"] = "auto") -> SkillResult:
        """Lower the held object so its bottom is ``dis`` above ``target_pose``'s position, then release."""
        side = resolve_arm(arm_tag)
        if isinstance(side, Failure):
            return side.result()
        held = self._held.get(side)
        if held is None or held.name != actor:
            return SkillResult.failure(f"the {side} arm does not hold {actor}", FailureKind.NOT_HOLDING)
        vals = as_numbers(target_pose, "target pose", (3, 7))
        nums = [as_number(pre_dis, "pre_dis"), as_number(dis, "dis")]
        bad = first_failure(vals, *nums)
        if bad is not None:
            return bad.result()
        assert not isinstance(vals, Failure)
        pre_m, dis_m = (v for v in nums if not isinstance(v, Failure))
        why = self.guard.check_values("target pose", vals) or self.guard.check_values("place distances", [pre_m, dis_m])
        if why is not None:
            return refused(why).result()
        if len(vals) == 7 and (q_bad := quat_problem(vals[3:], "target pose")) is not None:
            return SkillResult.failure(q_bad, FailureKind.BAD_PARAMETERS)
        R = self.current_pose(side).as_matrix()[:3, :3]
        tcp = self.guard.config.tcp_offset_m
        place_centre = np.array(vals[:3]) + np.array([0, 0, held.grasp_height_m + dis_m])
        ee_place = pose_from(place_centre + np.array([0, 0, tcp]), R)
        ee_pre = pose_from(ee_place.p + np.array([0, 0, pre_m]), R)
        refusal = self.guard.check_pose(side, ee_pre) or self.guard.check_pose(side, ee_place)
        if refusal is not None:  # both targets are checked before the first move
            return SkillResult.failure(f"place refused before moving: {refusal}", FailureKind.REFUSED_BY_GUARD)

        def body(log_: list[Command]) -> SkillResult:
            support = [support_box(place_centre[:2], vals[2] + dis_m, SUPPORT_HALF_XY_M)]
            why = (self.move_straight(side, ee_pre, log_, "pre-place")
                   or self.move_straight(side, ee_place, log_, "lower", ignore=support))
            if why is not None:
                return why.result()
            if is_open:
                why = self.command_gripper(side, 1.0, log_, "release")
                if why is not None:
                    return why.result()
                del self._held[side]
                why = self.move_straight(side, ee_pre, log_, "retreat")
                if why is not None:
                    return why.result(f"placed {actor} but could not retreat: ")
            return SkillResult.success(object=actor, arm=side)

        return self.run(body)

    def move_by_displacement(self, arm_tag: ArmSide, x: float = 0.0, y: float = 0.0, z: float = 0.0,
                             quat: Sequence[float] | None = None,
                             move_axis: Literal["world", "arm"] = "world") -> SkillResult:
        side = resolve_arm(arm_tag)
        if isinstance(side, Failure):
            return side.result()
        d_xyz = [as_number(v, name) for name, v in (("x", x), ("y", y), ("z", z))]
        q_in = as_numbers(quat, "quat", (4,)) if quat is not None else []
        bad = first_failure(*d_xyz, q_in)
        if bad is not None:
            return bad.result()
        d_m = [v for v in d_xyz if not isinstance(v, Failure)]
        q_wxyz = [] if isinstance(q_in, Failure) else q_in
        why = self.guard.check_values("displacement", [*d_m, *q_wxyz])
        if why is not None:
            return refused(why).result()
        if move_axis not in ("world", "arm"):
            return SkillResult.failure(f"move_axis must be 'world' or 'arm', got {move_axis!r}",
                                       FailureKind.BAD_PARAMETERS)
        now = self.current_pose(side)
        d = np.array(d_m, dtype=float)
        if move_axis == "arm":
            d = now.as_matrix()[:3, :3] @ d
        q = list(now.quat_wxyz) if quat is None else q_wxyz
        goal = parse_pose_list([*(now.p + d), *q], "displacement target")
        if isinstance(goal, Failure):
            return goal.result()
        return self.run(lambda log_: self._result(self.move_straight(side, goal, log_, "displace"), side))

    def move_to_pose(self, arm_tag: ArmSide, target_pose: Sequence[float]) -> SkillResult:
        side = resolve_arm(arm_tag)
        if isinstance(side, Failure):
            return side.result()
        goal = parse_pose_list(target_pose, "target pose")
        if isinstance(goal, Failure):
            return goal.result()
        return self.run(lambda log_: self._result(self.move_straight(side, goal, log_, "move"), side))

    def close_gripper(self, arm_tag: ArmSide, pos: float = 0.0) -> SkillResult:
        return self._gripper_skill(arm_tag, pos, "close")

    def open_gripper(self, arm_tag: ArmSide, pos: float = 1.0) -> SkillResult:
        """Open the gripper; opened, it lets go of what it held."""
        result = self._gripper_skill(arm_tag, pos, "open")
        if result.ok and arm_tag in self._held:
            del self._held[arm_tag]
        return result

    def back_to_origin(self, arm_tag: ArmSide) -> SkillResult:
        """Move to the arm's home joint configuration (joint path checked by the guard)."""
        side = resolve_arm(arm_tag)
        if isinstance(side, Failure):
            return side.result()
        arm = self.dual_arm.arm(side)
        home = np.asarray(getattr(getattr(arm, "config", None), "home_joints_rad", ()), dtype=float)
        if home.size == 0:
            return SkillResult.failure(f"the {side} arm has no home configuration", FailureKind.DEVICE_FAULT)

        def body(log_: list[Command]) -> SkillResult:
            q0 = arm.joint_positions_rad()
            speed = self.guard.config.max_joint_speed_rad_s * 0.5
            n = max(2, math.ceil(float(np.max(np.abs(home - q0))) / (speed * 0.05)) + 1)
            path = np.linspace(q0, home, n)
            why = self.guard.check_joint_path(side, path, 0.05)
            if why is not None:
                return refused(f"home: {why}").result()
            log_.append({"arm": side, "kind": "home", "goal_joints_rad": home.tolist(), "waypoints": n})
            if not self.config.dry_run:
                arm.follow_joint_path(path, 0.05)
                self._virtual.pop(side, None)
            return SkillResult.success(arm=side)

        return self.run(body)

    def get_arm_pose(self, arm_tag: ArmSide) -> SkillResult:
        side = resolve_arm(arm_tag)
        if isinstance(side, Failure):
            return side.result()
        try:
            return SkillResult.success(pose=self.current_pose(side).as_list())
        except DriverError as e:
            return SkillResult.failure(f"cannot read the {side} arm's pose: {e}", FailureKind.DEVICE_FAULT)

    def execute_ee_action(self, action: Sequence[float]) -> SkillResult:
        """16 values: per arm (left, then right) [x, y, z, qw, qx, qy, qz, gripper]."""
        vals = as_numbers(action, "an end-effector action", (16,))
        if isinstance(vals, Failure):
            return vals.result()
        bad = self.guard.check_values("action", vals)
        if bad is not None:
            return refused(bad).result()
        goals: dict[ArmSide, Pose] = {}
        chunks: tuple[tuple[ArmSide, list[float]], ...] = (("left", vals[:8]), ("right", vals[8:]))
        for side, chunk in chunks:
            goal = parse_pose_list(chunk[:7], f"{side} pose")
            if isinstance(goal, Failure):
                return goal.result()
            goals[side] = goal
        why = self.guard.check_clearance("left", goals["left"], goals["right"])
        if why is not None:
            return refused(why).result()

        def body(log_: list[Command]) -> SkillResult:
            for side, chunk in chunks:
                failed = (self.move_straight(side, goals[side], log_, "action")
                          or self.command_gripper(side, chunk[7], log_, "gripper"))
                if failed is not None:
                    return failed.result()
            return SkillResult.success()

        return self.run(body)

    # ---- small helpers ---------------------------------------------------------------------------------------
    def _result(self, why: Failure | None, side: ArmSide) -> SkillResult:
        return why.result() if why is not None else SkillResult.success(arm=side)

    def _gripper_skill(self, arm_tag: object, pos: object, label: str) -> SkillResult:
        args = gripper_args(arm_tag, pos)
        if isinstance(args, Failure):
            return args.result()
        side, opening = args
        return self.run(lambda log_: self._result(self.command_gripper(side, opening, log_, label), side))
