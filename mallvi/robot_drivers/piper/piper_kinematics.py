"""The AgileX Piper's kinematics: its modified (Craig) DH parameters and forward kinematics.

Each joint's origin is Rx(alpha)·Tx(a)·Rz(offset)·Tz(d); the joint then rotates about its local z. Lengths in
metres, angles in radians. ``dh_fk`` gives the flange in the base frame, as piper_sdk's forward kinematics do.
The simulator's URDF (``robot_drivers/embodiment/piper_dh.py``) is built from the same table.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from mallvi.robot_drivers.piper.config_piper import PIPER_JOINT_LIMITS_RAD

A_M = (0.0, 0.0, 0.28503, -0.02198, 0.0, 0.0)
D_M = (0.123, 0.0, 0.0, 0.25075, 0.0, 0.091)
ALPHA_RAD = (0.0, -math.pi / 2, 0.0, math.pi / 2, -math.pi / 2, math.pi / 2)
OFFSET_RAD = (0.0, -math.radians(172.22), -math.radians(102.78), 0.0, 0.0, 0.0)
JOINT_LIMITS_RAD = PIPER_JOINT_LIMITS_RAD

def _rx(a: float) -> NDArray[np.float64]:
    c, s = math.cos(a), math.sin(a)
    T = np.eye(4)
    T[1:3, 1:3] = [[c, -s], [s, c]]
    return T


def _rz(a: float) -> NDArray[np.float64]:
    c, s = math.cos(a), math.sin(a)
    T = np.eye(4)
    T[0:2, 0:2] = [[c, -s], [s, c]]
    return T


def _trans(x: float, y: float, z: float) -> NDArray[np.float64]:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def joint_origin(i: int) -> NDArray[np.float64]:
    """The fixed transform from link i's frame to joint i+1's frame (before the joint rotates), 0-based i."""
    return _rx(ALPHA_RAD[i]) @ _trans(A_M[i], 0, 0) @ _rz(OFFSET_RAD[i]) @ _trans(0, 0, D_M[i])


#: the six fixed joint-origin transforms, computed once (``dh_fk`` runs thousands of times per inverse kinematics)
JOINT_ORIGINS = tuple(joint_origin(i) for i in range(6))


def joint_transform(i: int, q_i_rad: float) -> NDArray[np.float64]:
    """Link i's frame to link i+1's frame at joint angle ``q_i_rad`` (0-based i): the origin, then the turn."""
    c, s = math.cos(q_i_rad), math.sin(q_i_rad)
    T = JOINT_ORIGINS[i].copy()
    col0, col1 = T[:3, 0].copy(), T[:3, 1].copy()
    T[:3, 0] = c * col0 + s * col1
    T[:3, 1] = c * col1 - s * col0
    return T


def dh_fk(q_rad: NDArray[np.float64] | list[float]) -> NDArray[np.float64]:
    """T_base_flange for six joint angles (radians), straight from the DH table."""
    T = joint_transform(0, float(q_rad[0]))
    for i in range(1, 6):
        T = T @ joint_transform(i, float(q_rad[i]))
    return T




def link_origins_base(q_rad: NDArray[np.float64] | list[float]) -> NDArray[np.float64]:
    """The base origin and each joint frame's origin up to the flange (7×3, base frame): the arm's skeleton."""
    T = np.eye(4)
    points = [T[:3, 3].copy()]
    for i in range(6):
        T = T @ joint_origin(i) @ _rz(float(q_rad[i]))
        points.append(T[:3, 3].copy())
    return np.asarray(points)
