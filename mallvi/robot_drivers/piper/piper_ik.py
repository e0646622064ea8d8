"""Inverse kinematics of the Piper as its firmware's end-pose mode needs it: flange pose in the base frame -> joints.

Damped least squares on the DH forward kinematics (``piper_kinematics.dh_fk``, the same kinematics as
piper_sdk's), started from the current joints and then from a few fixed seeds, within the joint limits.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.contracts.geometry import Pose
from mallvi.robot_drivers.piper.piper_kinematics import JOINT_LIMITS_RAD, dh_fk
from mallvi.robot_drivers.piper.piper_units import T_flange_ee

POSITION_TOL_M = 1e-4
ROTATION_TOL_RAD = 1e-3
_LO = np.array([lo for lo, _ in JOINT_LIMITS_RAD])
_HI = np.array([hi for _, hi in JOINT_LIMITS_RAD])
_SEEDS = (
    (0.0, 1.439, -0.484, 0.0, 0.703, 0.0),
    (0.0, 1.0, -1.0, 0.0, 0.5, 0.0),
    (0.0, 2.0, -1.5, 0.0, 0.0, 0.0),
)


def _error(T_goal: NDArray[np.float64], q: NDArray[np.float64]) -> NDArray[np.float64]:
    T = dh_fk(q)
    rot = Rotation.from_matrix(T_goal[:3, :3] @ T[:3, :3].T).as_rotvec()
    return np.concatenate([T_goal[:3, 3] - T[:3, 3], rot])


def _solve_from(T_goal: NDArray[np.float64], q0: NDArray[np.float64], iters: int) -> NDArray[np.float64] | None:
    q = np.clip(np.asarray(q0, dtype=float), _LO, _HI)
    eps = 1e-6
    for _ in range(iters):
        e = _error(T_goal, q)
        if np.linalg.norm(e[:3]) < POSITION_TOL_M and np.linalg.norm(e[3:]) < ROTATION_TOL_RAD:
            return q
        J = np.zeros((6, 6))
        for j in range(6):
            dq = np.zeros(6)
            dq[j] = eps
            J[:, j] = (e - _error(T_goal, q + dq)) / eps
        damping = 1e-3
        step = J.T @ np.linalg.solve(J @ J.T + damping * np.eye(6), e)
        q = np.clip(q + np.clip(step, -0.3, 0.3), _LO, _HI)
    return None


def piper_ik(T_base_flange: NDArray[np.float64], q_current_rad: NDArray[np.float64],
             iters: int = 100) -> NDArray[np.float64] | None:
    """Joints (rad) that put the flange at ``T_base_flange``, nearest the current ones tried first; None if none."""
    T_goal = np.asarray(T_base_flange, dtype=float)
    for q0 in (q_current_rad, *_SEEDS):
        q = _solve_from(T_goal, np.asarray(q0, dtype=float), iters)
        if q is not None:
            return q
    return None


def first_unreachable(T_world_base: Pose, path_ee_world: Sequence[Pose], q_start_rad: NDArray[np.float64],
                      flange_to_ee_m: float = 0.01) -> int | None:
    """The index of the first end-effector waypoint (world frame) the arm cannot reach following the path from
    ``q_start_rad`` (each waypoint solved from the previous solution), None when it can follow it all."""
    T_base_world = np.linalg.inv(T_world_base.as_matrix())
    T_ee_flange = np.linalg.inv(T_flange_ee(flange_to_ee_m))
    q = np.asarray(q_start_rad, dtype=float)
    for i, pose in enumerate(path_ee_world):
        solved = piper_ik(T_base_world @ pose.as_matrix() @ T_ee_flange, q)
        if solved is None:
            return i
        q = solved
    return None
