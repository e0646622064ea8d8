"""Inverse kinematics of the Piper as its firmware's end-pose mode needs it: flange pose in the base frame -> joints.

Damped least squares on the DH forward kinematics (``piper_kinematics.dh_fk``, the same kinematics as
piper_sdk's), started from the current joints and then from a few fixed seeds, within the joint limits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.geometry import Pose
from mallvi.robot_drivers.piper.piper_kinematics import JOINT_LIMITS_RAD, joint_transform
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


def _rotvec(R: NDArray[np.float64]) -> NDArray[np.float64]:
    """The rotation vector (axis times angle, rad) of rotation matrix ``R``, through its unit quaternion taken
    from the largest of its diagonal terms and trace (stable at every angle)."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    k = int(np.argmax((R[0, 0], R[1, 1], R[2, 2], tr)))
    if k == 3:
        w, x, y, z = 1.0 + tr, R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]
    else:
        i, j, m = k, (k + 1) % 3, (k + 2) % 3
        v = [0.0, 0.0, 0.0]
        v[i] = 1.0 - tr + 2.0 * R[i, i]
        v[j] = R[j, i] + R[i, j]
        v[m] = R[m, i] + R[i, m]
        w, (x, y, z) = R[m, j] - R[j, m], v
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    vec = math.sqrt(x * x + y * y + z * z)
    if vec == 0.0:
        return np.zeros(3)
    angle = 2.0 * math.atan2(vec, w)
    return np.array((x, y, z)) * (angle / vec)


def _error_of(T_goal: NDArray[np.float64], T: NDArray[np.float64]) -> NDArray[np.float64]:
    rot = _rotvec(T_goal[:3, :3] @ T[:3, :3].T)
    return np.concatenate([T_goal[:3, 3] - T[:3, 3], rot])


def _error_and_jacobian(T_goal: NDArray[np.float64], q: NDArray[np.float64],
                        eps: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The pose error at ``q`` and its forward-difference Jacobian (the error's change per joint, over ``eps``):
    each perturbed pose reuses the links before and after the joint it turns."""
    links = [joint_transform(i, float(q[i])) for i in range(6)]
    before = [np.eye(4)]
    for A in links[:-1]:
        before.append(before[-1] @ A)
    after = [np.eye(4)] * 6
    for i in range(4, -1, -1):
        after[i] = links[i + 1] @ after[i + 1]
    e = _error_of(T_goal, before[5] @ links[5])
    J = np.empty((6, 6))
    for j in range(6):
        T = before[j] @ joint_transform(j, float(q[j]) + eps) @ after[j]
        J[:, j] = (e - _error_of(T_goal, T)) / eps
    return e, J


def _solve_from(T_goal: NDArray[np.float64], q0: NDArray[np.float64], iters: int) -> NDArray[np.float64] | None:
    q = np.clip(np.asarray(q0, dtype=float), _LO, _HI)
    damping = 1e-3 * np.eye(6)
    for _ in range(iters):
        e, J = _error_and_jacobian(T_goal, q, 1e-6)
        if np.linalg.norm(e[:3]) < POSITION_TOL_M and np.linalg.norm(e[3:]) < ROTATION_TOL_RAD:
            return q
        step = J.T @ np.linalg.solve(J @ J.T + damping, e)
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
