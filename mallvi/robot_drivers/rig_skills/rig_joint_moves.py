"""Joint-space moves of a Piper for when its end effector cannot follow a straight line.

A move is the joints interpolated from where the arm is to an inverse-kinematics solution at the goal (the
Piper's own kinematics, ``piper_ik``); its end-effector poses (forward kinematics, world frame) are what the
guard and the depth-cloud check see. The rig sends the joint path itself, so the firmware's inverse kinematics
never has to follow it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.geometry import Pose
from mallvi.robot_drivers.piper.piper_ik import piper_ik
from mallvi.robot_drivers.piper.piper_kinematics import dh_fk
from mallvi.robot_drivers.piper.piper_units import T_flange_ee

JOINT_STEP_RAD = 0.02  # largest joint change between two waypoints of a joint-space move


def ee_pose_world(T_world_base: Pose, q_rad: NDArray[np.float64], flange_to_ee_m: float) -> Pose:
    """The end-effector pose (world frame) of a Piper at joints ``q_rad``."""
    return Pose.from_matrix(T_world_base.as_matrix() @ dh_fk(q_rad) @ T_flange_ee(flange_to_ee_m))


def joint_solution(T_world_base: Pose, goal_ee_world: Pose, q_now_rad: NDArray[np.float64],
                   flange_to_ee_m: float) -> NDArray[np.float64] | None:
    """Joints that put the end effector at ``goal_ee_world`` (the solution nearest ``q_now_rad`` tried first)."""
    T_base_flange = (np.linalg.inv(T_world_base.as_matrix()) @ goal_ee_world.as_matrix()
                     @ np.linalg.inv(T_flange_ee(flange_to_ee_m)))
    return piper_ik(T_base_flange, np.asarray(q_now_rad, dtype=float))


def all_reachable(T_world_base: Pose, goals_ee_world: Sequence[Pose], q_now_rad: NDArray[np.float64],
                  flange_to_ee_m: float) -> bool:
    """Whether every pose has a joint solution, each solved from the previous one's."""
    q = np.asarray(q_now_rad, dtype=float)
    for goal in goals_ee_world:
        solved = joint_solution(T_world_base, goal, q, flange_to_ee_m)
        if solved is None:
            return False
        q = solved
    return True


def joint_space_move(T_world_base: Pose, q_now_rad: NDArray[np.float64], goal_ee_world: Pose,
                     flange_to_ee_m: float, step_m: float) -> tuple[list[Pose], NDArray[np.float64]] | None:
    """(end-effector path, joint path N×6) from ``q_now_rad`` to a joint solution at ``goal_ee_world``, joints
    at most ``JOINT_STEP_RAD`` and the end effector at most about ``step_m`` apart; None when the goal has no
    joint solution."""
    q0 = np.asarray(q_now_rad, dtype=float)
    q_goal = joint_solution(T_world_base, goal_ee_world, q0, flange_to_ee_m)
    if q_goal is None:
        return None
    start = ee_pose_world(T_world_base, q0, flange_to_ee_m)
    n = max(1, math.ceil(float(np.max(np.abs(q_goal - q0))) / JOINT_STEP_RAD),
            math.ceil(float(np.linalg.norm(goal_ee_world.p - start.p)) / step_m))
    joints = np.linspace(q0, q_goal, n + 1)[1:]
    return [ee_pose_world(T_world_base, q, flange_to_ee_m) for q in joints], joints
