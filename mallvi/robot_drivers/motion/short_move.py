"""A short straight end-effector move made by joint interpolation, where mplib's screw planner stalls.

At the Piper's wrist singularity (joints 4 and 5 at 0, where joints 4 and 6 turn about one axis, as IK often
leaves the arm above a top-down grasp) the screw planner's pseudo-inverse step can fall under mplib's threshold,
so a straight move of a few millimetres fails. For such a move the joints are moved linearly to a nearby IK
solution instead, and every waypoint is checked to stay on the line, not to turn, and not to collide.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.geometry import Pose

SHORT_MOVE_M = 0.01  # longest move made this way
SHORT_TURN_RAD = math.radians(2.0)  # largest turn made this way, and the extra turn allowed on the way
SHORT_OFF_LINE_M = 0.002  # how far the end effector may stray from its point on the straight line


def turn_rad(a: Pose, b: Pose) -> float:
    """The angle between two orientations (rad)."""
    return 2.0 * math.acos(min(1.0, abs(float(np.dot(a.q, b.q)))))


def is_short(start: Pose, goal: Pose) -> bool:
    """Whether a straight move from ``start`` to ``goal`` is short enough to be interpolated in joint space."""
    return float(np.linalg.norm(goal.p - start.p)) <= SHORT_MOVE_M and turn_rad(start, goal) <= SHORT_TURN_RAD


def joint_line(
    q_start: NDArray[np.float64],
    q_goal: NDArray[np.float64],
    start: Pose,
    goal: Pose,
    fk: Callable[[NDArray[np.float64]], Pose],
    collides: Callable[[NDArray[np.float64]], bool],
    max_step_rad: float,
) -> NDArray[np.float64] | None:
    """Waypoints from ``q_start`` (end effector at ``start``) to ``q_goal`` (at ``goal``), no joint changing more
    than ``max_step_rad`` between two, or None when a waypoint strays more than ``SHORT_OFF_LINE_M`` from its
    point on the line, turns more than ``SHORT_TURN_RAD`` beyond the move's own turn, or ``collides``."""
    steps = max(2, math.ceil(float(np.max(np.abs(q_goal - q_start))) / max_step_rad))
    fractions = np.linspace(0.0, 1.0, steps + 1)
    path = q_start[None, :] + fractions[:, None] * (q_goal - q_start)[None, :]
    allowed_turn_rad = turn_rad(start, goal) + SHORT_TURN_RAD
    for frac, q in zip(fractions[1:], path[1:], strict=True):
        ee = fk(q)
        on_line = start.p + frac * (goal.p - start.p)
        if np.linalg.norm(ee.p - on_line) > SHORT_OFF_LINE_M or turn_rad(ee, goal) > allowed_turn_rad:
            return None
        if collides(q):
            return None
    return path
