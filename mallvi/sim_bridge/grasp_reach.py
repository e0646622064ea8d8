"""Reaching, closing on and holding an object in the simulator: the common core of the grasping skills.

``GraspReach.grasp_at`` brings the open gripper to one of an object's grasp frames (free motion to the pre-grasp
pose, then straight in), closes it and verifies the hold in physics. The episode's grasp faults act here: a
``grasp_miss`` pushes the object out from between the fingers before they close, a ``grasp_slip`` lets it fall
after the skill has lifted it (``slip_if_drawn``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.contracts.skills import SkillResult
from mallvi.sim_bridge.contingency import push_out_of_grasp
from mallvi.sim_bridge.grasp_frames import TOP_GRASP_LEANS_DEG, frame_from, leaned_top_grasps
from mallvi.sim_bridge.motion import Motion

if TYPE_CHECKING:
    from mallvi.sim_bridge.world import SimWorld

log = logging.getLogger(__name__)

SLIP_CLEAR_M = 0.01  # after a slip the fingertips end at least this far above the dropped object
CANDIDATE_IK_RESTARTS = 12  # IK restarts when screening grasp candidates (the pre-grasp plan re-solves with 40)


@dataclass(frozen=True)
class Grasped:
    """A verified hold: the grasp frame reached, the grasp fault drawn for it, the arm it was taken from."""

    key: str
    frame: Pose
    fault: str | None
    giver: ArmSide | None


def ee_for(grasp: Pose, back_m: float) -> Pose:
    """The end-effector pose ``back_m`` behind a grasp frame, along its approach."""
    T = grasp.as_matrix()
    return frame_from(T[:3, 3] - back_m * T[:3, 0], T[:3, :3])


class GraspReach:
    """Grasp machinery shared by ``grasp_actor``, ``upright_actor`` and the lay-down inside it."""

    def __init__(self, world: SimWorld, motion: Motion) -> None:
        self.world = world
        self.motion = motion

    def reach_grasp(self, side: ArmSide, actor: str, frames: list[tuple[str, Pose]], pre_grasp_dis: float,
                    grasp_dis: float, reasons: list[str]) -> tuple[str, Pose] | None:
        """Bring the open gripper to a grasp of ``actor``: free motion to the pre-grasp pose, then straight in.

        Candidates are tried in tiers: the upright grasps, then the top-down ones leaned by each of
        ``TOP_GRASP_LEANS_DEG`` (for objects at the edge of the reach, or near the arm's base where a straight
        vertical approach cannot be planned). Within a tier the three with the least joint travel are tried.
        Returns the (key, frame) reached, or None with the reasons appended to ``reasons``.
        """
        offset = self.world.embodiment.tcp_offset_m
        tiers = [frames] + [leaned_top_grasps(frames, lean) for lean in TOP_GRASP_LEANS_DEG]
        for tier in tiers:
            options = self.reachable_grasps(side, tier, pre_grasp_dis, grasp_dis, reasons)
            for _, key, frame in sorted(options, key=lambda o: o[0])[:3]:
                plan = self.motion.plan(side, ee_for(frame, offset + pre_grasp_dis), "free")
                if isinstance(plan, str):
                    reasons.append(f"{key}: {plan}")
                    continue
                self.motion.execute({side: plan}, gripper_to={side: 1.0})
                why = self.motion.move(side, ee_for(frame, offset + grasp_dis), "straight", frozenset({actor}))
                if why is not None:  # nothing moved on this failure: the arm waits at the pre-grasp pose
                    reasons.append(f"{key}: approach to {actor} failed: {why}")
                    continue
                return key, frame
        return None

    def reachable_grasps(self, side: ArmSide, frames: list[tuple[str, Pose]], pre_grasp_dis: float,
                         grasp_dis: float, reasons: list[str]) -> list[tuple[float, str, Pose]]:
        """(joint travel, key, frame) of the frames whose grasp and pre-grasp poses pass the guard and have IK;
        the reasons of the others are appended to ``reasons``."""
        w = self.world
        offset = w.embodiment.tcp_offset_m
        q_now = w.arms[side].joint_positions_rad()
        options: list[tuple[float, str, Pose]] = []
        for key, frame in frames:
            ee_grasp = ee_for(frame, offset + grasp_dis)
            ee_pre = ee_for(frame, offset + pre_grasp_dis)
            why = w.guard.check_pose(side, ee_grasp) or w.guard.check_pose(side, ee_pre)
            if why is not None:
                reasons.append(f"{key}: {why}")
                continue
            q_grasp, why = w.planners[side].ik(ee_grasp, q_now, n_init=CANDIDATE_IK_RESTARTS)
            if q_grasp is None:
                reasons.append(f"{key}: grasp pose unreachable ({why})")
                continue
            q_pre, why = w.planners[side].ik(ee_pre, q_grasp, n_init=CANDIDATE_IK_RESTARTS)
            if q_pre is None:
                reasons.append(f"{key}: pre-grasp pose unreachable ({why})")
                continue
            options.append((float(np.abs(q_pre - q_now).sum() + np.abs(q_grasp - q_pre).sum()), key, frame))
        return options

    def close_and_hold(self, side: ArmSide, pos: float, expected: str | None) -> tuple[str | None, str]:
        arm = self.world.arms[side]
        arm.set_gripper(pos)
        return self.world.holder.try_hold(side, expected)

    def grasp_at(self, side: ArmSide, actor: str, frames: list[tuple[str, Pose]], pre_grasp_dis: float,
                 grasp_dis: float, gripper_pos: float) -> Grasped | SkillResult:
        """Reach one of the grasp frames (see ``reach_grasp``), then close and verify the hold. The episode's
        grasp fault is drawn here: a ``grasp_miss`` pushes the object out from between the fingers before they
        close. On a failed hold the gripper opens and backs off to the pre-grasp pose.
        """
        w = self.world
        reasons: list[str] = []
        self.motion.sync_planner(side, with_objects=True, exclude=frozenset({actor}))
        reached = self.reach_grasp(side, actor, frames, pre_grasp_dis, grasp_dis, reasons)
        if reached is None:
            shown = reasons if len(reasons) <= 4 else [*reasons[:2], f"... {len(reasons) - 4} more ...", *reasons[-2:]]
            return SkillResult.failure(f"no reachable grasp of {actor} for the {side} arm: " + "; ".join(shown))
        key, frame = reached
        offset = w.embodiment.tcp_offset_m
        fault = w.faults.draw("grasp") if w.faults is not None else None
        if fault == "grasp_miss" and w.faults is not None:
            T_ee = w.arms[side].ee_pose().as_matrix()
            sideways = T_ee[:3, 2] if abs(T_ee[2, 2]) < 0.7 else T_ee[:3, 0]
            push_out_of_grasp(w.objects[actor], sideways, gripper_half_width_m=0.03,
                              grasp_centre_world=np.asarray(w.arms[side].tcp_pose().position_m, dtype=float))
            w.faults.record(fault, "grasp", actor, w.sim_time_s)
        giver = w.holder.holder_of(actor)  # a handover: the other arm still holds the object
        name, why_hold = self.close_and_hold(side, gripper_pos, actor)
        if name is None:
            w.arms[side].set_gripper(1.0)
            self.motion.move(side, ee_for(frame, offset + pre_grasp_dis), "straight")
            return SkillResult.failure(f"grasp of {actor} failed: {why_hold}")
        return Grasped(key, frame, fault, giver)

    def slip_if_drawn(self, side: ArmSide, actor: str, grasped: Grasped, gripper_pos: float) -> None:
        """Apply a drawn ``grasp_slip``: the object drops out of the lifted gripper, whose command stays closed.

        A tall object held near its top lands with its top still between the fingers; the hand then rises clear
        of it first (as if it had kept lifting while the object slid out), so the fingers do not catch it again.
        """
        w = self.world
        if grasped.fault != "grasp_slip" or w.faults is None:
            return
        w.holder.release(side)
        w.arms[side].set_gripper(1.0)  # the fingers let go and the object falls out...
        w.step(60)
        T_tcp = w.arms[side].tcp_pose().as_matrix()
        fingertips_z = float((T_tcp[:3, 3] + w.embodiment.tcp_to_fingertip_m * T_tcp[:3, 0])[2])
        caught_m = float(w.objects[actor].corners_world()[:, 2].max()) - fingertips_z
        if caught_m > -SLIP_CLEAR_M:
            ee = w.arms[side].ee_pose()
            up = Pose((ee.position_m[0], ee.position_m[1], ee.position_m[2] + caught_m + SLIP_CLEAR_M), ee.quat_wxyz)
            why = self.motion.move(side, up, "straight_then_free")
            if why is not None:
                log.info("the %s hand could not rise clear of %s after its slip: %s", side, actor, why)
        w.arms[side].set_gripper(gripper_pos)  # ...while the gripper's command stays "closed"
        w.faults.record("grasp_slip", "grasp", actor, w.sim_time_s)
