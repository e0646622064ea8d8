"""``upright_actor`` on a real rig: stand a lying object up by a gravity pivot in a loosened grip.

From the perceived box of an object lying on its side: open, come down on its axis near one end with the
fingers across it, close, lift until its length hangs clear of the surface, open the fingers to just over the
object's width for ``RigSkillsConfig.swing_dwell_s`` (it turns about the finger axis and hangs below them), close
again. Perception does not tell an object's top from its bottom, so the end nearer the arm's base is grasped (a
bottle may come up on its neck). Every motion passes the guard first; with ``dry_run`` nothing is sent.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.contracts.skills import Failure, FailureKind, SkillResult
from mallvi.contracts.world_model import ObjectInfo
from mallvi.robot_drivers.motion.pivot_grasp import (
    FINGER_SLACK_M,
    LYING_LENGTH_RATIO,
    end_grasp_offset_m,
    pivot_height_m,
)
from mallvi.robot_drivers.rig_skills.config_rig_skills import Command, RigSkillsConfig
from mallvi.robot_drivers.rig_skills.rig_geometry import pose_from, top_down_rotation
from mallvi.robot_drivers.safety.guard import SafetyGuard

GraspSkill = Callable[[str, ArmSide, float], SkillResult]
"""``grasp_actor(actor, arm, pre_grasp_dis)``, for an object that does not lie on its side."""


class PivotRig(Protocol):
    """What the stand-up needs from the rig's skills: their settings and guard, and their public motion core
    (``RigSkills`` implements it)."""

    config: RigSkillsConfig
    guard: SafetyGuard

    def move_straight(self, side: ArmSide, goal: Pose, log_: list[Command], label: str,
                      ignore: Sequence[tuple[NDArray[np.float64], NDArray[np.float64]]] = ()) -> Failure | None: ...

    def command_gripper(self, side: ArmSide, opening: float, log_: list[Command], label: str) -> Failure | None: ...

    def gripper_opening(self, side: ArmSide) -> float: ...

    def gripper_stroke_m(self, side: ArmSide) -> float | None: ...

    def base_pose(self, side: ArmSide) -> Pose | None: ...

    def reachable_yaw(self, side: ArmSide, target: NDArray[np.float64], yaw_rad: float) -> float: ...

    def mark_held(self, side: ArmSide, name: str, grasp_height_m: float) -> None: ...

    def run(self, body: Callable[[list[Command]], SkillResult]) -> SkillResult: ...


def stand_up_on_rig(sk: PivotRig, grasp: GraspSkill, side: ArmSide, actor: str, info: ObjectInfo,
                    pre_grasp_dis: float) -> SkillResult:
    """The body of ``RigSkills.upright_actor`` (arm, object and parameters already checked)."""
    half = np.asarray(info.size_m, dtype=float) / 2
    long_i = 0 if half[0] >= half[1] else 1
    length, width, thickness = 2 * half[long_i], 2 * half[1 - long_i], 2 * half[2]
    if length < LYING_LENGTH_RATIO * thickness:
        r = grasp(actor, side, pre_grasp_dis)
        note = f"{actor} does not lie on its side: " + ("grasped it as it stands" if r.ok else r.message)
        return SkillResult(r.ok, note, {**r.data, "already_upright": True}, r.kind)
    stroke_m = sk.gripper_stroke_m(side)
    if stroke_m is None:
        return SkillResult.failure(f"the {side} arm does not report its gripper stroke; upright_actor needs it to "
                                   "loosen the grip to the object's width", FailureKind.DEVICE_FAULT)
    if width + FINGER_SLACK_M > stroke_m:
        return SkillResult.failure(f"{actor} is {width * 100:.1f} cm wide; the gripper opens {stroke_m * 100:.1f} cm",
                                   FailureKind.OBJECT_STATE)
    d_end = end_grasp_offset_m(float(length), float(thickness), sk.config.palm_to_tcp_m)
    if isinstance(d_end, str):
        return SkillResult.failure(f"cannot stand {actor} up: {d_end}", FailureKind.OBJECT_STATE)
    yaw = float(Rotation.from_quat([*info.pose.q[1:], info.pose.q[0]]).as_euler("zyx")[0]) + long_i * math.pi / 2
    axis = np.array([math.cos(yaw), math.sin(yaw), 0.0])
    centre = np.asarray(info.pose.p, dtype=float)
    ends = [centre + sign * axis * (length / 2 - d_end) for sign in (1.0, -1.0)]
    base = sk.base_pose(side)
    near = np.asarray(base.p if base is not None else [(-0.3 if side == "left" else 0.3), -0.3, 0.0])
    grasp_centre = min(ends, key=lambda p: float(np.linalg.norm(p[:2] - near[:2])))
    R = top_down_rotation(sk.reachable_yaw(side, grasp_centre, yaw + math.pi / 2))  # fingers across the axis
    tcp = sk.guard.config.tcp_offset_m
    ee_grasp = pose_from(grasp_centre + np.array([0.0, 0.0, tcp]), R)
    ee_pre = pose_from(grasp_centre + np.array([0.0, 0.0, tcp + pre_grasp_dis]), R)
    pivot_z = pivot_height_m(float(centre[2] - half[2]), float(length), d_end)
    ee_pivot = pose_from(np.array([grasp_centre[0], grasp_centre[1], pivot_z + tcp]), R)
    loose = (width + FINGER_SLACK_M) / stroke_m
    target_box = [(centre, half + 0.01)]
    min_opening = sk.config.min_grasp_opening

    def body(log_: list[Command]) -> SkillResult:
        steps: list[Callable[[], Failure | None]] = [
            lambda: sk.command_gripper(side, 1.0, log_, "open"),
            lambda: sk.move_straight(side, ee_pre, log_, "pre-grasp", ignore=target_box),
            lambda: sk.move_straight(side, ee_grasp, log_, "approach", ignore=target_box),
            lambda: sk.command_gripper(side, 0.0, log_, "close"),
        ]
        for step in steps:
            why = step()
            if why is not None:
                return why.result()
        if not sk.config.dry_run and sk.gripper_opening(side) < min_opening:
            sk.command_gripper(side, 1.0, log_, "release")
            sk.move_straight(side, ee_pre, log_, "retreat", ignore=target_box)
            return SkillResult.failure(f"grasp of {actor} failed: the {side} gripper closed on nothing",
                                       FailureKind.GRASP_EMPTY)
        why = sk.move_straight(side, ee_pivot, log_, "lift to pivot", ignore=target_box)
        if why is not None:
            return why.result(f"grasped {actor} but cannot lift it to {pivot_z:.2f} m to let it swing upright: ")
        why = sk.command_gripper(side, loose, log_, "loosen")
        if why is not None:
            return why.result()
        log_.append({"arm": side, "kind": "swing", "dwell_s": sk.config.swing_dwell_s})
        if not sk.config.dry_run:
            time.sleep(sk.config.swing_dwell_s)
        why = sk.command_gripper(side, 0.0, log_, "close")
        if why is not None:
            return why.result()
        if not sk.config.dry_run and sk.gripper_opening(side) < min_opening:
            return SkillResult.failure(f"{actor} fell out of the loosened grip (the {side} gripper closed on "
                                       "nothing)", FailureKind.EXECUTION)
        sk.mark_held(side, actor, float(length - d_end))
        return SkillResult.success(f"{actor} swung upright in the {side} gripper (not seen yet: the Reflector "
                                   "looks)", object=actor, arm=side, pivot_m=[round(float(v), 3) for v in ee_pivot.p])

    return sk.run(body)
