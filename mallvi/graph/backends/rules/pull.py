"""Pulling an object back from the back of the table, where no grasp and no push reaches it.

A tall bar lying on its side, or a block, that a miss pushed to the back of the table (y >= ~0.16 m) lies where
neither arm's upright or leaned top-down grasp finds IK, and the pushes that would bring it forward start behind it:
past the table's edge (the plan checks refuse them) or out of reach with the push's straight-down hand. A hand
leaned forward reaches much further at table height, so the closed gripper comes down just behind the object's far
face with its approach leaned ``PULL_LEAN_DEG`` towards the back of the table and draws the object ``PULL_M``
towards the robot, in ``PULL_STEPS`` short straight moves, then rises and goes home. The subtask is then planned
again from where the object lies.

Probed in the simulator (handover_block, the 0.06 x 0.06 x 0.20 m bar lying across the table): with the approach
leaned 50° and the fingers' opening axis across the approach (turned one way for the right arm, the other for the
left: the other way round the right arm found IK for few of these poses), each arm reaches the grasp centre 3 and
9 cm above the table from y = 0.06 to 0.27 m at x = ±0.10 and to 0.30 m at x = ±0.20. Bars at (0.10, 0.23),
(0.13, 0.24), (0.19, 0.15) and (-0.10, 0.22) were pulled 6-10 cm forward. A bar lying along y at the back is not
reached: its far end lies past 0.33 m.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial.transform import Rotation

from mallvi.graph.backends.rules.strategies import EE_ABOVE_GRASP_CENTRE_M, NUDGE_CENTRE_ABOVE_BOTTOM_M
from mallvi.graph.schemas import ActionPlan, SceneObject, SkillCall

PULL_LEAN_DEG = 50.0
"""The approach leans this far from straight down, towards the back of the table."""
PULL_CLEAR_M = 0.02
"""The closed fingers come down this far behind the object's far face."""
PULL_M = 0.10
"""How far the fingers draw the object towards the robot (after closing the gap to its far face)."""
PULL_STEPS = 3
"""The draw is made in this many straight moves (one long straight move found no IK on its way, in the simulator)."""
PULL_RISE_M = 0.06
"""The fingers come down from, and go back up to, this far above where they pull."""
PULL_FROM_Y_M = 0.12
"""Only an object whose centre lies behind this (world y) is pulled: in front of it, the pushes reach."""
PULL_MAX_Y_M = 0.30
"""The fingers' start (behind the object's far face) must lie in front of this: the reach measured above."""
PULL_ARM_X_M = (-0.05, 0.30)
"""The x range (on the arm's own side, mirrored for the left arm) where an arm pulls: measured from x = 0 to 0.20,
a few centimetres past each end are left to the motion planner."""


def pull_orientation_wxyz(arm: str) -> list[float]:
    """The end-effector orientation of a pull by ``arm``: approach (x) down, leaned ``PULL_LEAN_DEG`` towards +y;
    the finger opening (y) across it, turned for each arm as measured."""
    t = math.radians(PULL_LEAN_DEG)
    a = np.array([0.0, math.sin(t), -math.cos(t)])
    f = np.cross(a, [1.0, 0.0, 0.0]) * (-1.0 if arm == "right" else 1.0)
    f /= float(np.linalg.norm(f))
    R = np.column_stack([a, f, np.cross(a, f)])
    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return [float(w), float(x), float(y), float(z)]


def _approach() -> tuple[float, float]:
    """The (y, z) components of the pull's approach axis."""
    t = math.radians(PULL_LEAN_DEG)
    return math.sin(t), -math.cos(t)


def pull_arms(obj: SceneObject) -> list[str]:
    """The arms that may pull ``obj`` (the one on its side first), none when it does not lie at the back."""
    x, y = obj.position_m[0], obj.position_m[1]
    far = y + obj.size_m[1] / 2 + PULL_CLEAR_M
    if y < PULL_FROM_Y_M or far > PULL_MAX_Y_M:
        return []
    lo, hi = PULL_ARM_X_M
    arms = [a for a in ("right", "left") if lo <= (x if a == "right" else -x) <= hi]
    return sorted(arms, key=lambda a: 0 if (a == "right") == (x >= 0) else 1)


def pull(arm: str, obj: SceneObject, table_z: float) -> ActionPlan:
    """Close the gripper, come down just behind ``obj``'s far face with the hand leaned forward, draw it ``PULL_M``
    towards the robot, rise and go home."""
    ox, oy, oz = obj.position_m
    bottom = max(table_z, oz - obj.size_m[2] / 2)
    low = bottom + min(NUDGE_CENTRE_ABOVE_BOTTOM_M, obj.size_m[2] / 2)
    gy = oy + obj.size_m[1] / 2 + PULL_CLEAR_M  # the grasp centre's y behind the object
    ay, az = _approach()
    high = low + PULL_RISE_M
    ee = [ox, gy - EE_ABOVE_GRASP_CENTRE_M * ay, high - EE_ABOVE_GRASP_CENTRE_M * az]
    step = -(PULL_CLEAR_M + PULL_M) / PULL_STEPS
    a = arm
    calls = [
        SkillCall(skill="close_gripper", arm=a, object=obj.id),  # type: ignore[arg-type]
        SkillCall(skill="move_to_pose", arm=a, target_pose=[*ee, *pull_orientation_wxyz(a)]),  # type: ignore[arg-type]
        SkillCall(skill="move_by_displacement", arm=a, args={"z": -PULL_RISE_M}),  # type: ignore[arg-type]
        *[SkillCall(skill="move_by_displacement", arm=a, args={"y": step})  # type: ignore[arg-type]
          for _ in range(PULL_STEPS)],
        SkillCall(skill="move_by_displacement", arm=a, args={"z": PULL_RISE_M}),  # type: ignore[arg-type]
        SkillCall(skill="back_to_origin", arm=a),  # type: ignore[arg-type]
        SkillCall(skill="open_gripper", arm=a),  # type: ignore[arg-type]
    ]
    return ActionPlan(calls=calls, strategy=f"pull {a}", rationale=(
        f"{obj.id} at ({ox:.2f}, {oy:.2f}) lies at the back of the table, where no grasp or push reaches it: the {a} "
        f"arm comes down behind it with its hand leaned forward and pulls it {PULL_M * 100:.0f} cm towards the robot, "
        f"to ({ox:.2f}, {oy - PULL_M:.2f}); the subtask is planned again from there"))


def pulls(obj: SceneObject, table_z: float) -> list[ActionPlan]:
    """A pull by each arm that may make one (``pull_arms``)."""
    return [pull(a, obj, table_z) for a in pull_arms(obj)]
