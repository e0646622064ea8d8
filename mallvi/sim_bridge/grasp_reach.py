"""Reaching, closing on and holding an object in the simulator: the common core of the grasping skills.

``GraspReach.grasp_at`` brings the open gripper to one of an object's grasp frames (free motion to the pre-grasp
pose, then straight in), closes it and verifies the hold in physics. The episode's grasp faults act through its
``FaultHooks`` (``contingency.SimFaults``): a ``grasp_miss`` as the fingers are about to close, a ``grasp_slip``
after the skill has lifted the object (``slip_if_drawn``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.contracts.skills import Failure, FailureKind
from mallvi.sim_bridge.grasp_frames import TOP_GRASP_LEANS_DEG, frame_from, leaned_top_grasps, rolled_top_grasps
from mallvi.sim_bridge.motion import Motion
from mallvi.sim_bridge.planning import ArmPlanner
from mallvi.sim_bridge.skill_ports import FaultHooks, Rig

log = logging.getLogger(__name__)

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

    def __init__(self, rig: Rig, planners: Mapping[ArmSide, ArmPlanner], motion: Motion, faults: FaultHooks) -> None:
        self.rig = rig
        self.planners = planners
        self.motion = motion
        self.faults = faults

    def reach_grasp(self, side: ArmSide, actor: str, frames: list[tuple[str, Pose]], pre_grasp_dis: float,
                    grasp_dis: float, reasons: list[str], closed_fingers: bool = False) -> tuple[str, Pose] | None:
        """Bring the open gripper to a grasp of ``actor``: free motion to the pre-grasp pose, then straight in.

        Candidates are tried in tiers: the upright grasps, then the top-down ones leaned by each of
        ``TOP_GRASP_LEANS_DEG`` (for objects at the edge of the reach, or near the arm's base where a straight
        vertical approach cannot be planned), then side grasps with the fingers up and down turned to come from
        above (``rolled_top_grasps``: an object lying on its side). Within a tier the three with the least joint
        travel are tried. Returns the (key, frame) reached, or None with the reasons appended to ``reasons``.
        ``closed_fingers``: both moves are planned with both grippers closed (``Motion.sync_planner``).
        """
        offset = self.rig.embodiment.tcp_offset_m
        tiers = [frames] + [leaned_top_grasps(frames, lean) for lean in TOP_GRASP_LEANS_DEG]
        tiers.append(rolled_top_grasps(frames))
        for tier in tiers:
            options = self.reachable_grasps(side, tier, pre_grasp_dis, grasp_dis, reasons)
            for _, key, frame in sorted(options, key=lambda o: o[0])[:3]:
                plan = self.motion.plan(side, ee_for(frame, offset + pre_grasp_dis), "free", opening=1.0,
                                        closed_fingers=closed_fingers)
                if isinstance(plan, Failure):
                    reasons.append(f"{key}: {plan}")
                    continue
                self.motion.execute({side: plan}, gripper_to={side: 1.0})
                why = self.motion.move(side, ee_for(frame, offset + grasp_dis), "straight", frozenset({actor}),
                                       closed_fingers)
                if why is not None:  # nothing moved on this failure: the arm waits at the pre-grasp pose
                    reasons.append(f"{key}: approach to {actor} failed: {why}")
                    continue
                return key, frame
        return None

    def reachable_grasps(self, side: ArmSide, frames: list[tuple[str, Pose]], pre_grasp_dis: float,
                         grasp_dis: float, reasons: list[str]) -> list[tuple[float, str, Pose]]:
        """(joint travel, key, frame) of the frames whose grasp and pre-grasp poses pass the guard and have IK;
        the reasons of the others are appended to ``reasons``."""
        rig = self.rig
        offset = rig.embodiment.tcp_offset_m
        q_now = rig.arms[side].joint_positions_rad()
        options: list[tuple[float, str, Pose]] = []
        for key, frame in frames:
            ee_grasp = ee_for(frame, offset + grasp_dis)
            ee_pre = ee_for(frame, offset + pre_grasp_dis)
            why = rig.guard.check_pose(side, ee_grasp) or rig.guard.check_pose(side, ee_pre)
            if why is not None:
                reasons.append(f"{key}: {why}")
                continue
            q_grasp, why = self.planners[side].ik(ee_grasp, q_now, n_init=CANDIDATE_IK_RESTARTS)
            if q_grasp is None:
                reasons.append(f"{key}: grasp pose unreachable ({why})")
                continue
            q_pre, why = self.planners[side].ik(ee_pre, q_grasp, n_init=CANDIDATE_IK_RESTARTS)
            if q_pre is None:
                reasons.append(f"{key}: pre-grasp pose unreachable ({why})")
                continue
            options.append((float(np.abs(q_pre - q_now).sum() + np.abs(q_grasp - q_pre).sum()), key, frame))
        return options

    def close_and_hold(self, side: ArmSide, pos: float, expected: str | None) -> tuple[str | None, Failure | None]:
        self.rig.arms[side].set_gripper(pos)
        return self.rig.holder.try_hold(side, expected)

    def grasp_at(self, side: ArmSide, actor: str, frames: list[tuple[str, Pose]], pre_grasp_dis: float,
                 grasp_dis: float, gripper_pos: float) -> Grasped | Failure:
        """Reach one of the grasp frames (see ``reach_grasp``), then close and verify the hold. The episode's
        grasp fault is drawn as the fingers are about to close (a ``grasp_miss`` acts then). On a failed hold the
        gripper opens and backs off to the pre-grasp pose. ``UNREACHABLE`` when no grasp frame is reached.
        """
        rig = self.rig
        reasons: list[str] = []
        reached = None
        # the open fingers first; where the objects' boxes (larger than the objects: a pan's box spans its handle,
        # a held object's neighbour) leave them no room, closed ones as the coarser check
        for closed in (False, True):
            self.motion.sync_planner(side, with_objects=True, exclude=frozenset({actor}), opening=1.0,
                                     closed_fingers=closed)
            reached = self.reach_grasp(side, actor, frames, pre_grasp_dis, grasp_dis, reasons, closed)
            if reached is not None:
                break
        if reached is None:
            shown = reasons if len(reasons) <= 4 else [*reasons[:2], f"... {len(reasons) - 4} more ...", *reasons[-2:]]
            return Failure(FailureKind.UNREACHABLE,
                           f"no reachable grasp of {actor} for the {side} arm: " + "; ".join(shown))
        key, frame = reached
        offset = rig.embodiment.tcp_offset_m
        fault = self.faults.grasp_closing(side, actor)
        giver = rig.holder.holder_of(actor)  # a handover: the other arm still holds the object
        name, why_hold = self.close_and_hold(side, gripper_pos, actor)
        if name is None:
            rig.arms[side].set_gripper(1.0)
            self.motion.move(side, ee_for(frame, offset + pre_grasp_dis), "straight")
            why = why_hold or Failure(FailureKind.GRASP_EMPTY, "nothing is held")
            return Failure(why.kind, f"grasp of {actor} failed: {why.message}")
        return Grasped(key, frame, fault, giver)

    def slip_if_drawn(self, side: ArmSide, actor: str, grasped: Grasped, gripper_pos: float) -> None:
        """Apply a drawn ``grasp_slip`` (the object drops out of the lifted gripper; see ``contingency.py``)."""
        self.faults.grasp_lifted(side, actor, grasped.fault, gripper_pos)
