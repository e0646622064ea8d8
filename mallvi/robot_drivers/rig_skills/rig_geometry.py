"""Pose helpers of the real-rig skills: top-down grasp frames and straight end-effector paths."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation, Slerp

from mallvi.contracts.geometry import Pose


def top_down_rotation(yaw_rad: float) -> NDArray[np.float64]:
    """End-effector rotation for a top-down grasp: x (approach) = world -z, y (fingers) at ``yaw_rad``."""
    x = np.array([0.0, 0.0, -1.0])
    y = np.array([math.cos(yaw_rad), math.sin(yaw_rad), 0.0])
    return np.column_stack([x, y, np.cross(x, y)])


def pose_from(p: NDArray[np.float64], R: NDArray[np.float64]) -> Pose:
    """A Pose from a position and a 3×3 rotation."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return Pose.from_matrix(T)


def straight_path(start: Pose, goal: Pose, step_m: float, step_rad: float = math.radians(3.0)) -> list[Pose]:
    """Waypoints (excluding ``start``) on the straight line to ``goal``, orientation slerped; at most ``step_m``
    and ``step_rad`` apart."""
    dist = float(np.linalg.norm(goal.p - start.p))
    turn = 2.0 * math.acos(min(1.0, abs(float(np.dot(start.q, goal.q)))))
    n = max(1, math.ceil(max(dist / step_m, turn / step_rad)))
    ends = Rotation.from_quat([[*start.q[1:], start.q[0]], [*goal.q[1:], goal.q[0]]])
    fractions = np.linspace(0.0, 1.0, n + 1)[1:]
    rots = Slerp([0.0, 1.0], ends)(fractions)
    return [pose_from(start.p + s * (goal.p - start.p), r.as_matrix()) for s, r in zip(fractions, rots, strict=True)]


def reachable_yaw(base_pose_world: Pose, target: NDArray[np.float64], yaw_rad: float) -> float:
    """Of the two equivalent finger directions (yaw, yaw + pi) of a top-down grasp, the one nearer the arm's
    natural finger direction (its base y axis turned by joint 1 towards the target), which keeps the last wrist
    joint near the middle of its range."""
    T = base_pose_world.as_matrix()
    p_base = np.linalg.inv(T) @ np.array([*np.asarray(target, dtype=float)[:3], 1.0])
    joint1 = math.atan2(p_base[1], p_base[0])
    natural = T[:3, :3] @ np.array([-math.sin(joint1), math.cos(joint1), 0.0])
    preferred = math.atan2(natural[1], natural[0])

    def gap(a: float) -> float:
        return abs((a - preferred + math.pi) % (2 * math.pi) - math.pi)

    return min((yaw_rad, yaw_rad + math.pi), key=gap)
