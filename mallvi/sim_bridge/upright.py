"""``upright_actor`` in the simulator: stand a lying object up by letting it swing in a loosened grip.

The object is grasped from above near its top end (on its axis, ``pivot_grasp.END_GRASP_M`` from the end, the
fingers across it) and lifted until its length would hang clear of the surface it lay on. The grip is then loosened
(``GraspHolder.hinge``): gravity swings the object about the finger axis until it hangs upright below the
fingers. The fingers close again and the wrist turns out the last degrees of tilt, so the arm ends holding the
object upright by its top, ready for ``place_actor``.

The width that counts is the object's where the fingers close (``grasp_width.py``): a bottle 8.3 cm across its body
is taken by its 3.2 cm neck. An object too wide there (a mug: its body fills the open gripper) is pinched by the
wall at the side of its opening instead (``rim_pinch.py``); it hangs tilted by the wall's offset from its axis, and
the wrist turns it upright. Only the top end is grasped, so the object comes up the right way round. When the arm
reaches the object but not its top end, the object is first laid down within reach (``lay_down.py``; not one pinched
by its rim); when that fails too the skill fails with "no reachable grasp ... for the <side> arm" (the other arm may
reach it). A swing that ends askew (something in the way) is a failure, never reported as upright, and the object is
put back down first.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import sapien
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.contracts.geometry import ARM_SIDES, ArmSide, Pose
from mallvi.contracts.skills import Failure, FailureKind, SkillResult
from mallvi.contracts.world_model import ObjectInfo
from mallvi.robot_drivers.motion.pivot_grasp import FINGER_SLACK_M, MIN_LEVER_M, end_grasp_offset_m, pivot_height_m
from mallvi.sim_bridge import layout
from mallvi.sim_bridge.grasp_frames import LYING_TILT_COS, frame_from
from mallvi.sim_bridge.grasp_width import width_across_m
from mallvi.sim_bridge.lay_down import lay_within_reach, put_down
from mallvi.sim_bridge.rim_pinch import rim_depth_m, rim_pinch_frames
from mallvi.sim_bridge.skill_parts import SkillParts

GraspSkill = Callable[[str, ArmSide, float], SkillResult]
"""``grasp_actor(actor, arm, pre_grasp_dis)``, for an object that already stands."""


log = logging.getLogger(__name__)

PIVOT_SHIFTS_M = (0.0, 0.05, 0.10, 0.15)  # pivot spots moved towards the arm's base when the lift is out of reach
PIVOT_HOME_XY_M = (0.16, -0.15)  # where the right arm holds a top-down grasp 0.2 m above the table with ease
SWING_MIN_S, SWING_MAX_S = 0.3, 2.5
AT_REST_RAD_S = 0.05
UPRIGHT_TOL_DEG = 10.0  # after the swing the object must hang within this of vertical
RIM_PRE_GRASP_M = 0.06  # a rim pinch's approach starts at most this far back
RIM_HANG_TOL_DEG = 30.0  # ... one pinched by its rim within this (its wall is off its axis), upright once levelled
LEVEL_MIN_DEG = 0.5  # smaller tilts are left as they are
SWEEP_MARGIN_M = 0.02  # the swinging object keeps this far from the pedestals


def tilt_deg(pose: Pose) -> float:
    """Angle between the object's z axis and world up."""
    return math.degrees(math.acos(float(np.clip(pose.as_matrix()[2, 2], -1.0, 1.0))))


def top_end_grasps(T_obj: NDArray[np.float64], centre_world: NDArray[np.float64], length_m: float,
                   end_offset_m: float) -> list[tuple[str, Pose]]:
    """Top-down grasp frames (x = approach, y = finger opening) on the axis of a lying object, ``end_offset_m``
    from its top end, with the fingers closing across it; the second is the first turned about the approach."""
    axis = T_obj[:3, 2]
    across = np.cross([0.0, 0.0, 1.0], axis)
    across /= max(1e-9, float(np.linalg.norm(across)))
    p = centre_world + axis * (length_m / 2 - end_offset_m)
    approach = np.array([0.0, 0.0, -1.0])
    R = np.column_stack([approach, across, np.cross(approach, across)])
    return [("top_end", frame_from(p, R)), ("top_end_flipped", frame_from(p, R @ np.diag([1.0, -1.0, -1.0])))]


def stand_up(sk: SkillParts, grasp: GraspSkill, side: ArmSide, actor: str, info: ObjectInfo, pre_grasp_dis: float,
             may_lay_down: bool = True) -> SkillResult:
    """The body of ``SimSkills.upright_actor`` (parameters already checked). When the arm reaches the lying
    object but not its top end, it first lays the object down within reach (``lay_down.py``; once)."""
    w = sk
    obj = w.objects[actor]
    T_obj = info.pose.as_matrix()
    if T_obj[2, 2] >= LYING_TILT_COS:
        r = grasp(actor, side, pre_grasp_dis)
        note = f"{actor} already stands upright: " + ("grasped it as it stands" if r.ok else r.message)
        return SkillResult(r.ok, note, {**r.data, "already_upright": True}, r.kind)
    state = FailureKind.OBJECT_STATE
    if T_obj[2, 2] <= -LYING_TILT_COS:
        return SkillResult.failure(f"{actor} stands on its top; upright_actor stands up objects lying on a side", state)
    holder = w.holder.holder_of(actor)
    if holder is not None:
        return SkillResult.failure(f"{actor} is in the {holder} gripper; upright_actor stands up an object lying "
                                   "on a surface", state)
    size = np.asarray(obj.size_m, dtype=float)
    vertical = 0 if abs(T_obj[2, 0]) >= abs(T_obj[2, 1]) else 1  # which cross axis points (most nearly) up
    thickness, width = float(size[vertical]), float(size[1 - vertical])
    max_gap = 2 * w.embodiment.finger_travel_m
    centre = np.asarray((obj.pose * obj.box_center_local()).p, dtype=float)
    support_z = float(obj.corners_world()[:, 2].min())
    offset = end_grasp_offset_m(float(size[2]), thickness, w.embodiment.palm_to_tcp_m)
    end_frames = [] if isinstance(offset, str) else top_end_grasps(T_obj, centre, float(size[2]), offset)
    # how wide it is where the fingers would close (a bottle's neck, not its body); its box where unmeasured
    at_end = None if not end_frames else width_across_m(obj, np.asarray(end_frames[0][1].position_m, dtype=float),
                                                         end_frames[0][1].as_matrix()[:3, 1])
    grip_width = at_end if at_end else width
    by_rim = grip_width + FINGER_SLACK_M > max_gap  # too wide to take across: pinched by its rim (``rim_pinch.py``)
    if by_rim:
        d_rim = rim_depth_m(info, float(size[2]))
        frames = rim_pinch_frames(info)
        if d_rim is None or not frames:
            return SkillResult.failure(f"{actor} is {width * 100:.1f} cm wide; the gripper opens "
                                       f"{max_gap * 100:.1f} cm, and it has no rim to pinch clear of a handle", state)
        d_end = d_rim
    else:
        if isinstance(offset, str):
            return SkillResult.failure(f"cannot stand {actor} up: {offset}", state)
        d_end = offset
        frames = end_frames
    pre = min(pre_grasp_dis, RIM_PRE_GRASP_M) if by_rim else pre_grasp_dis  # a leaned approach from afar: no IK
    grasped = sk.grasping.grasp_at(side, actor, frames, pre, 0.0, 0.0)
    if isinstance(grasped, Failure):
        # laying it down within reach takes it across its middle: not for one too wide for that
        if by_rim or not (may_lay_down and grasped.kind == FailureKind.UNREACHABLE):
            return grasped.result()
        why = lay_within_reach(sk, side, actor, pre_grasp_dis)
        if why is not None:
            return Failure(grasped.kind, f"{grasped.message}; laying it down within reach failed too: {why}").result()
        again = stand_up(sk, grasp, side, actor, w.truth.get_object(actor), pre_grasp_dis, may_lay_down=False)
        note = f"laid {actor} down within the {side} arm's reach first; "
        return SkillResult(again.ok, note + again.message, {**again.data, "laid_down": True}, again.kind)
    grasp_tcp_z = w.arms[side].tcp_pose().position_m[2]
    lever = _lever_m(sk, side, actor)
    if lever < MIN_LEVER_M:  # the object moved in the closing fingers: it would swing the wrong way round
        put_down(sk, side, grasp_tcp_z)
        return SkillResult.failure(f"{actor} shifted as the fingers closed: the grasp is {lever * 100:.1f} cm from its "
                                   f"centre towards its top (at least {MIN_LEVER_M * 100:.0f} cm needed); released "
                                   "it where it lies", FailureKind.GRASP_OFF_TARGET, grasp=grasped.key)
    pivot_z = pivot_height_m(support_z, float(size[2]), d_end)
    if by_rim:  # the pinch is at its wall, the far side of its body swings half its width lower
        pivot_z += 0.5 * float(min(size[0], size[1]))
    far = -np.array([T_obj[0, 2], T_obj[1, 2], 0.0])
    sweep = _Sweep(far / max(1e-9, float(np.linalg.norm(far))), float(size[2]), d_end, thickness)
    lift = _lift_to_pivot(sk, side, pivot_z, sweep)
    if lift is not None:
        return lift.result(f"grasped {actor} but cannot lift it to {pivot_z:.2f} m to let it swing upright: ",
                           grasp=grasped.key)
    # a rim pinch is off the object's axis: it hangs tilted until the wrist turns it upright (``_level``)
    pinch = sk.arms[side].finger_gap_m()
    swing = _swing(sk, side, actor, pinch if by_rim else width, RIM_HANG_TOL_DEG if by_rim else UPRIGHT_TOL_DEG)
    if swing is not None:
        put_down(sk, side, grasp_tcp_z)
        return Failure(swing.kind, swing.message + "; put it back down").result(grasp=grasped.key)
    _level(sk, side, actor)
    tilt = tilt_deg(w.truth.get_object(actor).pose)
    if tilt > UPRIGHT_TOL_DEG:
        put_down(sk, side, grasp_tcp_z)
        return SkillResult.failure(f"{actor} hangs {tilt:.0f}° from upright in the {side} gripper (the wrist did not "
                                   "turn it further); put it back down", FailureKind.EXECUTION, grasp=grasped.key)
    pivot = [round(float(v), 3) for v in w.arms[side].tcp_pose().position_m]
    sk.grasping.slip_if_drawn(side, actor, grasped, 0.0)
    return SkillResult.success(f"{actor} swung upright in the {side} gripper (tilt {tilt:.1f}°)", object=actor,
                               grasp=grasped.key, tilt_deg=round(tilt, 1), pivot_m=pivot)


def _lever_m(sk: SkillParts, side: ArmSide, actor: str) -> float:
    """How far the grasp centre lies from the object's centre along its axis, towards its top end."""
    obj = sk.objects[actor]
    axis = obj.pose.to_transformation_matrix()[:3, 2]
    centre = np.asarray((obj.pose * obj.box_center_local()).p, dtype=float)
    return float((np.asarray(sk.arms[side].tcp_pose().position_m, dtype=float) - centre) @ axis)


def _lift_to_pivot(sk: SkillParts, side: ArmSide, pivot_z: float, sweep: _Sweep) -> Failure | None:
    """Raise the grasp centre to ``pivot_z`` where it is or, out of reach there, at the spots ``_pivot_spots``
    offers, skipping those where the swing would hit a pedestal."""
    w = sk
    ee, tcp = w.arms[side].ee_pose(), w.arms[side].tcp_pose()
    dz = pivot_z - tcp.position_m[2]
    tcp_from_ee = np.asarray(tcp.position_m[:2], dtype=float) - np.asarray(ee.position_m[:2], dtype=float)
    why: Failure | None = None
    for x, y in _pivot_spots(sk, side):
        if not sweep.clear_of_pedestals(sk, np.array([x + tcp_from_ee[0], y + tcp_from_ee[1], pivot_z])):
            why = why or Failure(FailureKind.NO_PLAN, f"the swing about ({x:.2f}, {y:.2f}) would hit a pedestal")
            continue
        target = Pose((x, y, ee.position_m[2] + dz), ee.quat_wxyz)
        why = sk.motion.move(side, target, "straight_then_free")
        if why is None:
            return None
    return why


def _pivot_spots(sk: SkillParts, side: ArmSide) -> list[tuple[float, float]]:
    """End-effector xy to swing at, best first: where it is, then on the way to ``PIVOT_HOME_XY_M`` (mirrored for
    the left arm), then moved towards the arm's base."""
    here = np.asarray(sk.arms[side].ee_pose().position_m[:2], dtype=float)
    home = np.array([PIVOT_HOME_XY_M[0] * (-1.0 if side == "left" else 1.0), PIVOT_HOME_XY_M[1]])
    spots = [here, here + 0.5 * (home - here), home]
    spots += [np.asarray(_towards_base(sk, side, shift)) for shift in PIVOT_SHIFTS_M[1:]]
    return [(float(p[0]), float(p[1])) for p in spots]


@dataclass(frozen=True)
class _Sweep:
    """The space a lying object sweeps while it swings from lying to hanging below the grasp centre."""

    far_world: NDArray[np.float64]  # horizontal unit vector from the grasp towards the object's far (bottom) end
    length_m: float
    end_offset_m: float
    thickness_m: float

    def points(self, pivot: NDArray[np.float64]) -> NDArray[np.float64]:
        """Points on the object's axis at every 15° of the swing."""
        out = []
        for phi in np.linspace(0.0, math.pi / 2, 7):
            along = math.cos(phi) * self.far_world + math.sin(phi) * np.array([0.0, 0.0, -1.0])
            for r in np.linspace(-self.end_offset_m, self.length_m - self.end_offset_m, 9):
                out.append(pivot + r * along)
        return np.asarray(out)

    def clear_of_pedestals(self, sk: SkillParts, pivot: NDArray[np.float64]) -> bool:
        """Whether the swept object keeps ``SWEEP_MARGIN_M`` from both arms' pedestals."""
        reach = self.thickness_m / math.sqrt(2) + SWEEP_MARGIN_M  # half the cross-section's diagonal, and more
        pts = self.points(pivot)
        for s in ARM_SIDES:
            bx, by, bz = layout.arm_base_position(s, sk.arm_spacing_m)
            half = layout.PEDESTAL_HALF_WIDTH_M + reach
            inside = (np.abs(pts[:, 0] - bx) < half) & (np.abs(pts[:, 1] - by) < half) & (pts[:, 2] < bz + reach)
            if bool(np.any(inside)):
                return False
        return True


def _swing(sk: SkillParts, side: ArmSide, actor: str, width_m: float, tol_deg: float) -> Failure | None:
    """Loosen the grip and let gravity turn the object until it is at rest; turn a leaned gripper back to
    straight down while the object keeps hanging; grip it again. Returns the reason on failure (the object
    hanging more than ``tol_deg`` from vertical among them)."""
    w = sk
    arm = w.arms[side]
    w.holder.hinge(side)
    arm.set_gripper_target(min(1.0, (width_m + FINGER_SLACK_M) / (2 * w.embodiment.finger_travel_m)))
    _wait_at_rest(sk, actor)
    if _unlean(sk, side, actor):
        _wait_at_rest(sk, actor)
    name, why = sk.grasping.close_and_hold(side, 0.0, actor)
    if name is None:
        return Failure(FailureKind.EXECUTION, f"{actor} fell out of the loosened grip: {why}")
    tilt = tilt_deg(w.truth.get_object(actor).pose)
    if tilt > tol_deg:
        return Failure(FailureKind.EXECUTION, f"{actor} did not swing upright: it came to rest {tilt:.0f}° from "
                                              "vertical (something in the way?)")
    return None


def _wait_at_rest(sk: SkillParts, actor: str) -> None:
    """Step physics until the object turns slower than ``AT_REST_RAD_S`` (at least ``SWING_MIN_S``)."""
    w = sk
    body = w.objects[actor].entity.find_component_by_type(sapien.physx.PhysxRigidDynamicComponent)
    chunk = 25
    for i in range(int(SWING_MAX_S / (chunk * layout.PHYSICS_DT_S))):
        w.step(chunk)
        spin = float(np.linalg.norm(body.get_angular_velocity())) if body is not None else 0.0
        if (i + 1) * chunk * layout.PHYSICS_DT_S >= SWING_MIN_S and spin < AT_REST_RAD_S:
            return


def _unlean(sk: SkillParts, side: ArmSide, actor: str) -> bool:
    """Turn the gripper about its finger axis (the loosened grip's hinge) to approach straight down, where it
    is or, out of reach there, after carrying the hanging object towards the arm's base; whether it turned.
    The hanging object is not turned with it."""
    w = sk
    T_ee = w.arms[side].ee_pose().as_matrix()
    fingers = T_ee[:3, 1]
    down = np.array([0.0, 0.0, -1.0]) - fingers * float(-fingers[2])  # straight down, across the finger axis
    if float(np.linalg.norm(down)) < 1e-6:
        return False
    down /= float(np.linalg.norm(down))
    angle = math.atan2(float(np.cross(T_ee[:3, 0], down) @ fingers), float(T_ee[:3, 0] @ down))
    if abs(math.degrees(angle)) < LEVEL_MIN_DEG:
        return False
    R = Rotation.from_rotvec(fingers * angle).as_matrix()
    why = _turn_about_tcp(sk, side, R)
    for shift in PIVOT_SHIFTS_M[1:]:
        if why is None:
            return True
        ee = w.arms[side].ee_pose()
        x, y = _towards_base(sk, side, shift)
        if sk.motion.move(side, Pose((x, y, ee.position_m[2]), ee.quat_wxyz), "straight_then_free") is None:
            _wait_at_rest(sk, actor)
            why = _turn_about_tcp(sk, side, R)
    if why is None:
        return True
    log.info("the %s gripper stays leaned %.0f°: %s", side, math.degrees(angle), why)
    return False


def _towards_base(sk: SkillParts, side: ArmSide, shift_m: float) -> tuple[float, float]:
    """The end-effector's xy moved ``shift_m`` towards the arm's base."""
    w = sk
    base_xy = np.asarray(layout.arm_base_position(side, w.arm_spacing_m)[:2], dtype=float)
    here = np.asarray(w.arms[side].ee_pose().position_m[:2], dtype=float)
    x, y = here + shift_m * (base_xy - here) / max(1e-9, float(np.linalg.norm(base_xy - here)))
    return float(x), float(y)


def _turn_about_tcp(sk: SkillParts, side: ArmSide, R_world: NDArray[np.float64]) -> Failure | None:
    """Rotate the gripper by ``R_world`` about the grasp centre (a straight move); the reason if it cannot."""
    w = sk
    T_ee = w.arms[side].ee_pose().as_matrix()
    tcp = np.asarray(w.arms[side].tcp_pose().position_m, dtype=float)
    return sk.motion.move(side, frame_from(tcp + R_world @ (T_ee[:3, 3] - tcp), R_world @ T_ee[:3, :3]), "straight")


def _level(sk: SkillParts, side: ArmSide, actor: str) -> None:
    """Turn the wrist about the grasp centre so the held object's axis points straight up, where it is or, out of
    reach there, after carrying it towards the arm's base (a rim pinch leaves it some 20° off)."""
    w = sk
    for shift in PIVOT_SHIFTS_M:
        axis = w.truth.get_object(actor).pose.as_matrix()[:3, 2]
        angle = math.acos(float(np.clip(axis[2], -1.0, 1.0)))
        if math.degrees(angle) < LEVEL_MIN_DEG:
            return
        if shift > 0.0:
            ee = w.arms[side].ee_pose()
            x, y = _towards_base(sk, side, shift)
            if sk.motion.move(side, Pose((x, y, ee.position_m[2]), ee.quat_wxyz), "straight_then_free") is not None:
                continue
        turn = np.cross(axis, [0.0, 0.0, 1.0])
        R = Rotation.from_rotvec(turn / float(np.linalg.norm(turn)) * angle).as_matrix()
        why = _turn_about_tcp(sk, side, R)
        if why is None:
            return
        # the tilt stays (the caller checks it); place_actor keeps it
        log.info("could not level %s (%.1f° off vertical): %s", actor, math.degrees(angle), why)
