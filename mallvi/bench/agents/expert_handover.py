"""handover_block's expert: privileged reach checks choose where the left arm holds the block up for the right arm.

The left arm grasps the tall block top-down and holds it up; the right arm takes it by one of its side grasps
(cp4..cp11) and puts it on the pad. Whether the right arm reaches a side grasp, and whether the pad is reachable
with the grasp it got, depends on where and turned how the block is held up; the script checks both with the
arms' IK (the same grasp frames and poses the skills use) before it moves. After the left arm lets go, the right
arm draws the block down out of its open fingers before the left arm goes home, turns a block it holds askew
upright, and lowers it onto the pad without letting go, then opens and rises. When no point passes, the block goes
via the table; when the right arm cannot put it on the pad from the grasp it has, it sets the block down in its
own half and takes it top-down.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.bench.agents.expert_ctx import ExpertContext, up
from mallvi.bench.tasks.task_base import point
from mallvi.contracts.geometry import ArmSide, Pose

log = logging.getLogger(__name__)

BLOCK, PAD = "red_block", "blue_pad"
SCREEN_IK_RESTARTS = 12  # as the grasp skill screens its candidates
TAKE_PRE_GRASP_M = 0.08  # the right arm's pre-grasp distance at the handover
PAD_PRE_M = 0.1  # place_actor's default pre-place distance, used for the pad and the regrasp spot
#: the pre-place distances _set_down tries in turn, longest first (see _set_down)
SET_DOWN_PRE_DIS_M = (PAD_PRE_M, 0.06, 0.03)
REGRASP_PRE_GRASP_M = 0.1  # grasp_actor's default pre-grasp distance, for the top-down regrasp
MAX_TILT_DEG = 3.0  # a block the right arm holds leaning more than this falls over when let go on the pad
#: the right arm's approach counts as along the left arm's finger axis above this |cos| (horizontal parts)
ALONG_FINGERS_COS = 0.7
DRAW_DOWN_M = 0.06  # the right arm draws the block this far down out of the left fingers (at most)
SLIDE_OFF_M = 0.1  # the left arm slides this far off the block along its finger pads (when it cannot be drawn)
RISE_M = 0.08  # the right arm rises this far straight up after letting go of the block
SIDE_CPS = (4, 5, 6, 7, 8, 9, 10, 11)
TOP_CPS = (0, 1, 2, 3)
#: handover points (x, y, height of the block's bottom over the table), in the order tried
HANDOVER_POINTS_M: tuple[tuple[float, float, float], ...] = (
    (0.0, -0.05, 0.08), (0.0, -0.05, 0.12), (0.05, -0.05, 0.08), (0.05, -0.05, 0.12), (0.0, -0.10, 0.08),
    (0.05, -0.10, 0.10), (-0.05, -0.05, 0.10), (0.0, 0.0, 0.10), (0.0, -0.05, 0.04), (0.0, -0.05, 0.16),
    (0.08, -0.08, 0.10), (-0.05, -0.10, 0.06),
)
TURNS_DEG = (0, 90, -90, 180)
#: where the left arm may set the block down for the right arm (x, y), and the pre-place distances tried
TABLE_SPOTS_M = ((0.0, -0.05), (0.0, -0.10), (0.05, -0.08), (-0.05, -0.08), (0.0, 0.0), (-0.08, -0.12))
TABLE_PRE_DIS_M = (0.1, 0.05, 0.02)
#: where the right arm sets the block down in its own half to take it again top-down (x, y)
REGRASP_SPOTS_M = ((0.15, -0.08), (0.20, -0.05), (0.12, -0.12), (0.22, -0.12), (0.08, -0.05), (0.18, -0.16))


@dataclass(frozen=True)
class Handover:
    """A checked handover: the block's bottom centre and yaw, and the right arm's contact point."""

    target: list[float]
    cp: int


def _rz(yaw: float) -> NDArray[np.float64]:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


class _Reach:
    """The privileged handles: the block's pose and grasp frames, the arms' planners and the safety guard."""

    def __init__(self, c: ExpertContext) -> None:
        from mallvi.sim_bridge.grasp_frames import grasp_frames

        w: Any = c.world
        self.c = c
        self.planners = w.planners
        self.arms = w.arms
        self.sync = w.skills.motion.sync_planner
        self.fingers_m = w.skills.motion.fingers_m
        self.guard = w.skills.parts.rig.guard
        self.offset = float(w.skills.parts.rig.embodiment.tcp_offset_m)
        self.info = w.skills.parts.truth.get_object(BLOCK)
        self.grasp_frames = grasp_frames
        self.T_obj = np.asarray(w.objects[BLOCK].pose.to_transformation_matrix())
        self.fp = np.asarray(w.objects[BLOCK].point_world("fp0").p)

    def block_at(self, target: Sequence[float], yaw: float) -> NDArray[np.float64]:
        """The block's pose (4×4) with its bottom centre at ``target`` turned to ``yaw`` (as place_actor aligns)."""
        T = self.T_obj
        R_new = _rz(yaw - math.atan2(T[1, 0], T[0, 0])) @ T[:3, :3]
        fp_in_obj = T[:3, :3].T @ (self.fp - T[:3, 3])
        T_new = np.eye(4)
        T_new[:3, :3] = R_new
        T_new[:3, 3] = np.asarray(target, dtype=float) - R_new @ fp_in_obj
        return T_new

    def has_ik(self, arm: ArmSide, T: NDArray[np.float64]) -> bool:
        pose = Pose.from_matrix(T)
        if self.guard.check_pose(arm, pose) is not None:
            return False
        ok: bool = self.planners[arm].has_ik(pose, self.arms[arm].joint_positions_rad(), n_init=SCREEN_IK_RESTARTS)
        return ok

    def ik(self, arm: ArmSide, T: NDArray[np.float64], seed: NDArray[np.float64]) -> NDArray[np.float64] | None:
        pose = Pose.from_matrix(T)
        if self.guard.check_pose(arm, pose) is not None:
            return None
        q, _ = self.planners[arm].ik(pose, seed, n_init=SCREEN_IK_RESTARTS)
        return None if q is None else np.asarray(q, dtype=float)

    def best_grasp(
        self, T_obj_new: NDArray[np.float64], cp: int, pre_grasp_m: float = TAKE_PRE_GRASP_M
    ) -> NDArray[np.float64] | None:
        """The right arm's end-effector pose (4×4) at the grasp ``cp`` of the block at ``T_obj_new`` that the grasp
        skill would try first (least joint travel among those with IK at grasp and pre-grasp), or None."""
        frames = self.grasp_frames(self.info, cp)
        if isinstance(frames, str):
            return None
        delta = T_obj_new @ np.linalg.inv(self.T_obj)
        q_now = self.arms["right"].joint_positions_rad()
        best: tuple[float, NDArray[np.float64]] | None = None
        for _, frame in frames:
            F = delta @ frame.as_matrix()
            T_grasp, T_pre = F.copy(), F.copy()
            T_grasp[:3, 3] = F[:3, 3] - self.offset * F[:3, 0]
            T_pre[:3, 3] = F[:3, 3] - (self.offset + pre_grasp_m) * F[:3, 0]
            q_grasp = self.ik("right", T_grasp, q_now)
            if q_grasp is None:
                continue
            q_pre = self.ik("right", T_pre, q_grasp)
            if q_pre is None:
                continue
            travel = float(np.abs(q_pre - q_now).sum() + np.abs(q_grasp - q_pre).sum())
            if best is None or travel < best[0]:
                best = (travel, T_grasp)
        return None if best is None else best[1]

    def pad_reachable(self, T_obj_held: NDArray[np.float64], T_ee: NDArray[np.float64]) -> bool:
        """Whether the right arm, holding the block at ``T_obj_held`` with its end-effector at ``T_ee``, has IK for
        the pre-place and place poses on the pad at one of the four turns the expert tries."""
        return self.reach_with_hold(T_obj_held, T_ee, up(point(self.c.world, PAD, "fp1"), 0.002))

    def reach_with_hold(self, T_obj_held: NDArray[np.float64], T_ee: NDArray[np.float64], target: Sequence[float],
                        turns: Sequence[float] = (0.0, math.pi / 2, -math.pi / 2, math.pi)) -> bool:
        """Whether the right arm, holding the block at ``T_obj_held`` with its end-effector at ``T_ee``, has IK for
        place_actor's pre-place and place poses (the block's bottom at ``target``) at one of ``turns`` (rad)."""
        T = T_obj_held
        fp_in_obj = T[:3, :3].T @ (self.fp_now(T) - T[:3, 3])
        ee_in_obj = np.linalg.inv(T) @ T_ee
        for delta in turns:
            T_new = np.eye(4)
            T_new[:3, :3] = _rz(delta) @ T[:3, :3]
            T_new[:3, 3] = np.asarray(target, dtype=float) - T_new[:3, :3] @ fp_in_obj
            T_ee_new = T_new @ ee_in_obj
            ok = True
            for back, with_objects in ((PAD_PRE_M, True), (0.0, False)):
                self.sync("right", with_objects=with_objects)
                T_b = T_ee_new.copy()
                T_b[:3, 3] = T_ee_new[:3, 3] - back * T_ee_new[:3, 0]
                if not self.has_ik("right", T_b):
                    ok = False
                    break
            if ok:
                return True
        return False

    def fp_now(self, T_obj_held: NDArray[np.float64]) -> NDArray[np.float64]:
        """The block's bottom centre (fp0) for the block at ``T_obj_held``."""
        fp_in_obj = self.T_obj[:3, :3].T @ (self.fp - self.T_obj[:3, 3])
        return np.asarray(T_obj_held[:3, :3] @ fp_in_obj + T_obj_held[:3, 3], dtype=float)


def _handovers(c: ExpertContext) -> Iterator[Handover]:
    """Handover points and turns at which the left arm has IK to hold the block, the right arm reaches a side grasp
    and, with that grasp, the pad; best first."""
    try:
        r = _Reach(c)
    except (AttributeError, KeyError) as e:  # a world without planners or the block's grasp frames
        log.warning("handover_block expert: no screened handover points (%s: %s); trying the fixed ones",
                    type(e).__name__, e)
        return
    z0 = c.world.table_top_z
    T_ee_left = r.arms["left"].ee_pose().as_matrix()
    # the left fingers stand round the block as they hold it now, where the right arm's open fingers go
    fingers_left_m = r.fingers_m("left")
    # first the right arm's approaches along the left arm's finger axis (across it, the approach more often
    # pushes the block askew between the left fingers' pads) with room to draw the block down (_clear_left_fingers)
    for needs in ((True, True), (False, True), (False, False)):  # (along the fingers, room to draw it down)
        for x, y, dz in HANDOVER_POINTS_M:
            for deg in TURNS_DEG:
                yaw = math.radians(deg)
                target = [x, y, z0 + dz]
                T_obj_new = r.block_at(target, yaw)
                T_left = T_obj_new @ np.linalg.inv(r.T_obj) @ T_ee_left
                r.sync("left", with_objects=True)
                q_left = r.ik("left", T_left, r.arms["left"].joint_positions_rad())
                if q_left is None:
                    continue
                for cp in SIDE_CPS:
                    r.sync("right", with_objects=True, exclude=frozenset({BLOCK}))
                    r.planners["right"].set_other_arm(q_left, fingers_left_m)
                    T_grasp = r.best_grasp(T_obj_new, cp)
                    if T_grasp is None or (needs[0] and not _along(T_grasp[:3, 0], T_left[:3, 1])):
                        continue
                    if needs[1] and not _can_draw_down(r, T_grasp, dz):
                        continue
                    if needs == (False, True) and _along(T_grasp[:3, 0], T_left[:3, 1]):
                        continue  # yielded before
                    if not needs[1] and _can_draw_down(r, T_grasp, dz):
                        continue  # yielded before
                    if r.pad_reachable(T_obj_new, T_grasp):
                        yield Handover([*target, math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)], cp)
                        break


def _can_draw_down(r: _Reach, T_grasp: NDArray[np.float64], dz: float) -> bool:
    """Whether the right arm has IK to draw the block straight down from the grasp (see _clear_left_fingers)."""
    T = T_grasp.copy()
    T[:3, 3] = T[:3, 3] - np.array([0.0, 0.0, min(DRAW_DOWN_M, dz - 0.015)])
    return r.has_ik("right", T)


def _along(approach: NDArray[np.float64], fingers: NDArray[np.float64]) -> bool:
    """Whether the horizontal part of ``approach`` runs along ``fingers`` (both world vectors)."""
    a, f = np.array([approach[0], approach[1]]), np.array([fingers[0], fingers[1]])
    na, nf = float(np.linalg.norm(a)), float(np.linalg.norm(f))
    return na > 1e-6 and nf > 1e-6 and abs(float(a @ f)) / (na * nf) > ALONG_FINGERS_COS


def _clear_left_fingers(c: ExpertContext) -> None:
    """After the left arm let go: the right arm draws the block straight down out of the open left fingers, or
    (no IK for that) the left arm slides off sideways, along its finger pads; before the left arm goes home."""
    bottom_m = float(point(c.world, BLOCK, "fp0")[2]) - c.world.table_top_z
    for down in (min(DRAW_DOWN_M, bottom_m - 0.015), DRAW_DOWN_M / 2):
        if down > 0.02 and c.do("move_by_displacement", arm_tag="right", z=-down).ok:
            return
    w: Any = c.world
    fingers = np.asarray(w.arms["left"].ee_pose().as_matrix())[:3, 1]
    side = np.array([-float(fingers[1]), float(fingers[0])])  # horizontal, across the finger axis
    norm = float(np.linalg.norm(side))
    if norm < 1e-6:
        return
    for sign in (1.0, -1.0):
        d = sign * side / norm * SLIDE_OFF_M
        if c.do("move_by_displacement", arm_tag="left", x=float(d[0]), y=float(d[1])).ok:
            return


def _hand_over_in_the_air(c: ExpertContext) -> bool:
    """The left arm holds the block at checked points until the right arm takes it; True once it holds it."""
    tried = 0
    for h in _handovers(c):
        if tried >= 4:
            break
        tried += 1
        if c.holder("left") != BLOCK:
            return False
        if not c.place(BLOCK, "left", h.target, is_open=False, pre_dis=0.0, dis=0.0, constrain="align"):
            continue
        if c.do("grasp_actor", actor=BLOCK, arm_tag="right", contact_point_id=h.cp,
                pre_grasp_dis=TAKE_PRE_GRASP_M).ok:  # fmt: skip
            return True
        c.do("back_to_origin", arm_tag="right")
    if tried:
        return False
    # nothing passed the checks: the former order (the checks may miss a grasp the skill finds)
    z0 = c.world.table_top_z
    for cps in ((4, 5, 6, 7, 8), (9, 10, 11)):
        for deg in TURNS_DEG:
            if c.holder("left") != BLOCK:
                return False
            yaw = math.radians(deg)
            target = [0.0, -0.05, z0 + 0.08, math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
            if not c.place(BLOCK, "left", target, is_open=False, pre_dis=0.0, dis=0.0, constrain="align"):
                continue
            if any(c.do("grasp_actor", actor=BLOCK, arm_tag="right", contact_point_id=cp,
                        pre_grasp_dis=TAKE_PRE_GRASP_M).ok for cp in cps):  # fmt: skip
                return True
        c.do("back_to_origin", arm_tag="right")
    return False


def _via_table(c: ExpertContext) -> bool:
    """The left arm sets the block down where the right arm may take it (lower approaches, other spots), goes
    home, and the right arm grasps it; True once the right arm holds it."""
    z0 = c.world.table_top_z
    placed = False
    for pre_dis in TABLE_PRE_DIS_M:
        for x, y in TABLE_SPOTS_M:
            if c.holder("left") != BLOCK:
                break
            if c.place(BLOCK, "left", [x, y, z0], pre_dis=pre_dis):
                placed = True
                break
        if placed or c.holder("left") != BLOCK:
            break
    if c.holder("left") == BLOCK:
        c.do("open_gripper", arm_tag="left")
    c.do("back_to_origin", arm_tag="left")
    return c.pick(BLOCK, arms=["right"]) is not None


def _tilt_deg(c: ExpertContext) -> float:
    """How far the block's axis leans from upright (degrees; privileged)."""
    w: Any = c.world
    T = np.asarray(w.objects[BLOCK].pose.to_transformation_matrix())
    return math.degrees(math.acos(max(-1.0, min(1.0, float(T[2, 2])))))


def _straighten(c: ExpertContext) -> None:
    """Turn the right hand about the held block's centre so the block stands upright (the right arm's approach
    can push the block askew between the left fingers, and place_actor keeps that lean down to the pad)."""
    w: Any = c.world
    T = np.asarray(w.objects[BLOCK].pose.to_transformation_matrix())
    axis = np.cross(T[:3, 2], np.array([0.0, 0.0, 1.0]))
    s_ang = float(np.linalg.norm(axis))
    if s_ang < 1e-6:
        return
    R_fix = Rotation.from_rotvec(axis / s_ang * math.asin(min(1.0, s_ang)))
    centre = np.asarray(point(c.world, BLOCK, "center"), dtype=float)
    T_ee = np.asarray(w.arms["right"].ee_pose().as_matrix())
    p_new = centre + R_fix.apply(T_ee[:3, 3] - centre)
    x, y, z, qw = (R_fix * Rotation.from_matrix(T_ee[:3, :3])).as_quat()  # scipy: x, y, z, w
    d = p_new - T_ee[:3, 3]
    c.do("move_by_displacement", arm_tag="right", x=float(d[0]), y=float(d[1]), z=float(d[2]),
         quat=[float(qw), float(x), float(y), float(z)])


def _set_down(c: ExpertContext, target: Sequence[float]) -> bool:
    """The right arm lowers the held block onto ``target`` without letting go, opens and rises straight up (its
    own release inside place_actor retreats along the tilted side approach, which can knock the tall block
    over); True once it is let go there.

    A failed descent is tried again from nearer (``SET_DOWN_PRE_DIS_M``) while the arm still holds the block:
    with the slanted side grasp of a hand-over, mplib's screw planner can stall at the very end of a 10 cm
    descent (the twist of its last step falls under its 1e-4 stop threshold) and report the straight line as
    failed, though IK along it is smooth and collision-free."""
    for pre_dis in SET_DOWN_PRE_DIS_M:
        if c.holder("right") != BLOCK:
            return False
        if c.place(BLOCK, "right", target, is_open=False, pre_dis=pre_dis, dis=0.0):
            c.do("open_gripper", arm_tag="right")
            c.do("move_by_displacement", arm_tag="right", z=RISE_M)
            return True
    return False


def _to_pad(c: ExpertContext) -> bool:
    return _set_down(c, up(point(c.world, PAD, "fp1"), 0.002))


def _regrasp_spots(c: ExpertContext) -> Iterator[list[float]]:
    """Spots and turns in the right arm's half where it can set the held block down, reach a top-down grasp of
    it standing there and, with that grasp, the pad; best first."""
    try:
        r = _Reach(c)
    except (AttributeError, KeyError) as e:  # a world without planners or the block's grasp frames
        log.warning("handover_block expert: no screened handover points (%s: %s); trying the fixed ones",
                    type(e).__name__, e)
        return
    z0 = c.world.table_top_z
    T_ee = r.arms["right"].ee_pose().as_matrix()
    yaw_now = math.atan2(r.T_obj[1, 0], r.T_obj[0, 0])
    for x, y in REGRASP_SPOTS_M:
        for deg in TURNS_DEG:
            yaw = yaw_now + math.radians(deg)
            T_spot = r.block_at([x, y, z0], yaw)
            if not r.reach_with_hold(T_spot, T_spot @ np.linalg.inv(r.T_obj) @ T_ee, [x, y, z0], turns=(0.0,)):
                continue
            r.sync("right", with_objects=True, exclude=frozenset({BLOCK}))
            for cp in TOP_CPS:
                T_grasp = r.best_grasp(T_spot, cp, pre_grasp_m=REGRASP_PRE_GRASP_M)
                if T_grasp is not None and r.pad_reachable(T_spot, T_grasp):
                    yield [x, y, z0, math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
                    break
                r.sync("right", with_objects=True, exclude=frozenset({BLOCK}))


def _regrasp_and_place(c: ExpertContext) -> None:
    """The right arm sets the held block down in its half, takes it again top-down and puts it on the pad."""
    if c.holder("right") == BLOCK:
        down = False
        for tried, spot in enumerate(_regrasp_spots(c)):
            if tried >= 3 or c.holder("right") != BLOCK:
                break
            if _set_down(c, spot):
                down = True
                break
        if not down and c.holder("right") == BLOCK:
            z0 = c.world.table_top_z
            down = any(_set_down(c, [x, y, z0]) for x, y in REGRASP_SPOTS_M[:2])
        if c.holder("right") == BLOCK:
            c.do("open_gripper", arm_tag="right")
    c.do("back_to_origin", arm_tag="right")
    for cps in (TOP_CPS, None):
        got = False
        if cps is None:
            got = c.pick(BLOCK, arms=["right"]) is not None
        else:
            for cp in cps:
                if c.do("grasp_actor", actor=BLOCK, arm_tag="right", contact_point_id=cp,
                        pre_grasp_dis=REGRASP_PRE_GRASP_M).ok:  # fmt: skip
                    got = True
                    break
        if got:
            if _to_pad(c):
                return
            c.do("open_gripper", arm_tag="right")
            c.do("back_to_origin", arm_tag="right")


def handover_block(c: ExpertContext) -> None:
    """The left arm holds the block up at a checked point and turn, the right arm takes it and puts it on the
    pad; via the table when no point in the air works; a top-down regrasp in the right arm's half when the pad is
    out of reach with the grasp the right arm has."""
    if c.pick(BLOCK, arms=["left"]) is None:
        return
    if _hand_over_in_the_air(c):
        c.do("open_gripper", arm_tag="left")
        # the right arm draws the block straight down out of the open left fingers first (the left arm has no
        # room to rise off it there): else the way home or the right arm's way to the pad drag the block across
        # those fingers and leave it askew in the right grip
        _clear_left_fingers(c)
        c.do("back_to_origin", arm_tag="left")
    elif not _via_table(c):
        return
    if _tilt_deg(c) > MAX_TILT_DEG:
        _straighten(c)
    if _tilt_deg(c) > MAX_TILT_DEG or not _to_pad(c):  # askew in the grip it would fall over on the pad
        _regrasp_and_place(c)
    c.do("back_to_origin", arm_tag="right")
