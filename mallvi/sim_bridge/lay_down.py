"""Carry an object lying on its side to a new spot, still lying, turned so its top end points at one arm.

``upright_actor`` uses it when the arm cannot reach the top end of a lying object where it fell: the object is
grasped across its middle, lifted, turned about the vertical and laid down in the arm's own half of the table with
its top end towards the arm's base, where the top-end grasp reaches it. The grasp and the put-down are a grasp and
a place like any other: each draws the episode's fault of its kind.
"""

from __future__ import annotations

import logging
import math

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.contracts.skills import Failure
from mallvi.sim_bridge import layout
from mallvi.sim_bridge.grasp_frames import grasp_frames
from mallvi.sim_bridge.skill_parts import SkillParts

log = logging.getLogger(__name__)

LAY_SPOTS_M = ((0.10, -0.06), (0.12, -0.12), (0.08, 0.0), (0.16, -0.02))  # centre: (x towards the arm's side, y)
LAY_TURNS_DEG = (0, 45, -45, 90, -90)  # headings tried, from the top end pointing straight at the arm's base
LAY_LIFT_M = 0.04  # carried this far above the table
LAY_CLEARANCE_M = 0.02  # kept from other objects' footprints
TABLE_MARGIN_M = 0.03  # kept from the table's edges


def lay_within_reach(sk: SkillParts, side: ArmSide, actor: str, pre_grasp_dis: float) -> str | None:
    """Grasp the lying ``actor`` across its middle and lay it down within ``side``'s reach of its top end.

    Returns None when it was laid down (or slipped out on the way: the caller looks where it lies now), else why
    not; a failed lay-down puts the object back down where it was lifted.
    """
    w = sk
    frames = grasp_frames(w.truth.get_object(actor), None)
    if isinstance(frames, str):
        return frames
    top_down = [(k, f) for k, f in frames if f.as_matrix()[2, 0] < -0.9]
    if not top_down:
        return f"{actor} offers no grasp from above where it lies"
    grasped = sk.grasping.grasp_at(side, actor, top_down, pre_grasp_dis, 0.0, 0.0)
    if isinstance(grasped, Failure):
        return grasped.message
    grasp_tcp_z = w.arms[side].tcp_pose().position_m[2]
    ee = w.arms[side].ee_pose()
    why = sk.motion.move(side, Pose((ee.position_m[0], ee.position_m[1], ee.position_m[2] + LAY_LIFT_M),
                                    ee.quat_wxyz), "straight_then_free")
    if why is not None:
        put_down(sk, side, grasp_tcp_z)
        return f"cannot lift {actor} to carry it: {why}"
    sk.grasping.slip_if_drawn(side, actor, grasped, 0.0)
    if w.holder.held_by(side) != actor:
        return None
    fault, offset_m = sk.faults.place_drawn(actor)
    reasons: list[str] = []
    for T_ee in _lay_poses(sk, side, actor, offset_m):
        final = Pose.from_matrix(T_ee)
        pre = Pose((final.position_m[0], final.position_m[1], final.position_m[2] + LAY_LIFT_M), final.quat_wxyz)
        why = sk.motion.move(side, pre, "free") or sk.motion.move(side, final, "straight")
        if why is not None:
            reasons.append(why.message)
            continue
        sk.faults.carried_off(actor, fault)
        w.holder.release(side)
        w.arms[side].set_gripper(1.0)
        _retreat(sk, side, pre)
        sk.faults.placed(actor, fault)
        return None
    put_down(sk, side, grasp_tcp_z)
    shown = reasons[:2] + ([f"... {len(reasons) - 2} more"] if len(reasons) > 2 else [])
    return f"no spot within the {side} arm's reach to lay {actor} down: " + ("; ".join(shown) or "all occupied")


def _lay_poses(sk: SkillParts, side: ArmSide, actor: str, offset_m: NDArray[np.float64]) -> list[NDArray[np.float64]]:
    """End-effector poses (4×4, world) that lay the held ``actor`` at each free spot and heading, best first."""
    w = sk
    obj = w.objects[actor]
    T_obj = obj.pose.to_transformation_matrix()
    centre_local = np.asarray(obj.box_center_local().p, dtype=float)
    centre = T_obj[:3, :3] @ centre_local + T_obj[:3, 3]
    above_support_m = float(centre[2] - obj.corners_world()[:, 2].min())
    axis = T_obj[:3, 2]
    heading_now = math.atan2(float(axis[1]), float(axis[0]))
    base_xy = np.asarray(layout.arm_base_position(side, w.arm_spacing_m)[:2], dtype=float)
    sign = -1.0 if side == "left" else 1.0
    T_ee = w.arms[side].ee_pose().as_matrix()
    poses: list[NDArray[np.float64]] = []
    for sx, sy in LAY_SPOTS_M:
        spot = np.array([sign * sx, sy]) + offset_m[:2]
        towards_base = math.atan2(*(base_xy - spot)[::-1])
        for turn_deg in LAY_TURNS_DEG:
            heading = towards_base + math.radians(turn_deg)
            direction = np.array([math.cos(heading), math.sin(heading)])
            if not _free(sk, actor, spot, direction):
                continue
            R_new = Rotation.from_euler("z", heading - heading_now).as_matrix() @ T_obj[:3, :3]
            centre_new = np.array([spot[0], spot[1], w.table_top_z + above_support_m + 0.004])
            T_new = np.eye(4)
            T_new[:3, :3] = R_new
            T_new[:3, 3] = centre_new - R_new @ centre_local
            poses.append(T_new @ np.linalg.inv(T_obj) @ T_ee)
    return poses


def _free(sk: SkillParts, actor: str, spot: NDArray[np.float64], direction: NDArray[np.float64]) -> bool:
    """Whether the object, lying with its centre at ``spot`` along ``direction``, stays on the table and off the
    footprints of the other objects."""
    w = sk
    obj = w.objects[actor]
    half_len = float(obj.size_m[2]) / 2
    half_w = float(max(obj.size_m[0], obj.size_m[1])) / 2
    ends = [spot + s * half_len * direction for s in (1.0, -1.0)]
    lim_x = layout.TABLE_SIZE_M[0] / 2 - TABLE_MARGIN_M - half_w
    lim_y = layout.TABLE_SIZE_M[1] / 2 - TABLE_MARGIN_M - half_w
    if any(abs(e[0]) > lim_x or abs(e[1]) > lim_y for e in ends):
        return False
    for name, other in w.objects.items():
        if name == actor:
            continue
        c = np.asarray((other.pose * other.box_center_local()).p, dtype=float)[:2]
        t = float(np.clip((c - ends[1]) @ direction, 0.0, 2 * half_len))
        gap = float(np.linalg.norm(c - (ends[1] + t * direction)))
        if gap < float(max(other.size_m[0], other.size_m[1])) / 2 + half_w + LAY_CLEARANCE_M:
            return False
    return True


def put_down(sk: SkillParts, side: ArmSide, tcp_z: float) -> None:
    """Lower the held object straight down until the grasp centre is at ``tcp_z`` (where it was grasped), let go
    and back off upwards; where the arm cannot go down the object is let go where it is."""
    w = sk
    ee = w.arms[side].ee_pose()
    drop_m = w.arms[side].tcp_pose().position_m[2] - tcp_z
    if drop_m > 0.005:
        low = Pose((ee.position_m[0], ee.position_m[1], ee.position_m[2] - drop_m), ee.quat_wxyz)
        why = sk.motion.move(side, low, "straight")
        if why is not None:
            log.info("could not lower the object before letting go: %s", why)
    w.holder.release(side)
    w.arms[side].set_gripper(1.0)
    up = w.arms[side].ee_pose()
    _retreat(sk, side, Pose((up.position_m[0], up.position_m[1], up.position_m[2] + 0.05), up.quat_wxyz))


def _retreat(sk: SkillParts, side: ArmSide, pose: Pose) -> None:
    """Back off after letting go; an arm that cannot stays where it is (``back_to_origin`` rises clear later)."""
    why = sk.motion.move(side, pose, "straight")
    if why is not None:
        log.info("the %s arm could not back off after letting go: %s", side, why)
