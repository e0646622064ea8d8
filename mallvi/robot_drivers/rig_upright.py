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
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from scipy.spatial.transform import Rotation

from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.contracts.skills import SkillResult
from mallvi.contracts.world_model import ObjectInfo
from mallvi.robot_drivers.pivot_grasp import (
    FINGER_SLACK_M,
    LYING_LENGTH_RATIO,
    end_grasp_offset_m,
    pivot_height_m,
)
from mallvi.robot_drivers.rig_geometry import pose_from, top_down_rotation

if TYPE_CHECKING:
    from mallvi.robot_drivers.rig_skills import Command, RigSkills


def stand_up_on_rig(sk: RigSkills, side: ArmSide, actor: str, info: ObjectInfo, pre_grasp_dis: float) -> SkillResult:
    """The body of ``RigSkills.upright_actor`` (arm, object and parameters already checked)."""
    half = np.asarray(info.size_m, dtype=float) / 2
    long_i = 0 if half[0] >= half[1] else 1
    length, width, thickness = 2 * half[long_i], 2 * half[1 - long_i], 2 * half[2]
    if length < LYING_LENGTH_RATIO * thickness:
        r = sk.grasp_actor(actor, side, pre_grasp_dis=pre_grasp_dis)
        note = f"{actor} does not lie on its side: " + ("grasped it as it stands" if r.ok else r.message)
        return SkillResult(r.ok, note, {**r.data, "already_upright": True})
    stroke_m = getattr(getattr(sk.dual_arm.arm(side), "config", None), "gripper_max_stroke_m", None)
    if not isinstance(stroke_m, float):
        return SkillResult.failure(f"the {side} arm does not report its gripper stroke; upright_actor needs it to "
                                   "loosen the grip to the object's width")
    if width + FINGER_SLACK_M > stroke_m:
        return SkillResult.failure(f"{actor} is {width * 100:.1f} cm wide; the gripper opens {stroke_m * 100:.1f} cm")
    d_end = end_grasp_offset_m(float(length), float(thickness), sk.config.palm_to_tcp_m)
    if isinstance(d_end, str):
        return SkillResult.failure(f"cannot stand {actor} up: {d_end}")
    yaw = float(Rotation.from_quat([*info.pose.q[1:], info.pose.q[0]]).as_euler("zyx")[0]) + long_i * math.pi / 2
    axis = np.array([math.cos(yaw), math.sin(yaw), 0.0])
    centre = np.asarray(info.pose.p, dtype=float)
    ends = [centre + sign * axis * (length / 2 - d_end) for sign in (1.0, -1.0)]
    base = getattr(sk.dual_arm.arm(side), "base_pose_world", None)
    near = np.asarray(base.p if isinstance(base, Pose) else [(-0.3 if side == "left" else 0.3), -0.3, 0.0])
    grasp_centre = min(ends, key=lambda p: float(np.linalg.norm(p[:2] - near[:2])))
    R = top_down_rotation(sk._reachable_yaw(side, grasp_centre, yaw + math.pi / 2))  # fingers across the axis
    tcp = sk.guard.config.tcp_offset_m
    ee_grasp = pose_from(grasp_centre + np.array([0.0, 0.0, tcp]), R)
    ee_pre = pose_from(grasp_centre + np.array([0.0, 0.0, tcp + pre_grasp_dis]), R)
    pivot_z = pivot_height_m(float(centre[2] - half[2]), float(length), d_end)
    ee_pivot = pose_from(np.array([grasp_centre[0], grasp_centre[1], pivot_z + tcp]), R)
    loose = (width + FINGER_SLACK_M) / stroke_m
    target_box = [(centre, half + 0.01)]
    min_opening = sk.config.min_grasp_opening

    def body(log_: list[Command]) -> SkillResult:
        steps: list[Callable[[], str | None]] = [
            lambda: sk._gripper(side, 1.0, log_, "open"),
            lambda: sk._move(side, ee_pre, log_, "pre-grasp", ignore=target_box),
            lambda: sk._move(side, ee_grasp, log_, "approach", ignore=target_box),
            lambda: sk._gripper(side, 0.0, log_, "close"),
        ]
        for step in steps:
            why = step()
            if why is not None:
                return SkillResult.failure(why)
        if not sk.config.dry_run and sk._opening(side) < min_opening:
            sk._gripper(side, 1.0, log_, "release")
            sk._move(side, ee_pre, log_, "retreat", ignore=target_box)
            return SkillResult.failure(f"grasp of {actor} failed: the {side} gripper closed on nothing")
        why = sk._move(side, ee_pivot, log_, "lift to pivot", ignore=target_box)
        if why is not None:
            return SkillResult.failure(f"grasped {actor} but cannot lift it to {pivot_z:.2f} m to let it swing "
                                       f"upright: {why}")
        why = sk._gripper(side, loose, log_, "loosen")
        if why is not None:
            return SkillResult.failure(why)
        log_.append({"arm": side, "kind": "swing", "dwell_s": sk.config.swing_dwell_s})
        if not sk.config.dry_run:
            time.sleep(sk.config.swing_dwell_s)
        why = sk._gripper(side, 0.0, log_, "close")
        if why is not None:
            return SkillResult.failure(why)
        if not sk.config.dry_run and sk._opening(side) < min_opening:
            return SkillResult.failure(f"{actor} fell out of the loosened grip (the {side} gripper closed on "
                                       "nothing)")
        sk._mark_held(side, actor, float(length - d_end))
        return SkillResult.success(f"{actor} swung upright in the {side} gripper (not seen yet: the Reflector "
                                   "looks)", object=actor, arm=side, pivot_m=[round(float(v), 3) for v in ee_pivot.p])

    return sk._run(body)

