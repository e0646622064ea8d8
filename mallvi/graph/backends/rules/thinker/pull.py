"""Bringing an object back from the back of the table, where no grasp and no push reaches it.

A tall bar lying on its side, or a block, that a miss pushed to the back of the table (y >= ~0.16 m) lies where
neither arm's upright or leaned top-down grasp finds IK, and the pushes that would bring it forward start behind it:
past the table's edge (the plan checks refuse them) or out of reach with the push's straight-down hand. A hand
leaned forward reaches much further at table height. Two ways use that, each followed by planning the subtask again
from where the object then lies:

- ``pull``: the closed gripper comes down just behind the object's far face with its approach leaned
  ``PULL_LEAN_DEG`` towards the back of the table and draws the object ``PULL_M`` towards the robot, in
  ``PULL_STEPS`` short straight moves, then rises and goes home. For an object whose far face is within reach (a
  bar lying across the table).
- ``drag``: the open gripper, leaned ``DRAG_LEAN_DEG``, comes down on the object's near end with the fingers across
  it, closes on it and slides it ``DRAG_M`` towards the robot along the table, then lets go. For a bar lying along
  the table's depth, whose far end no hand gets behind. Only an arm the benchmark's allocation rule lets grasp the
  object drags it (``ALLOCATION_X_M``).

Probed in the simulator (a 0.06 x 0.06 x 0.20 m bar lying down). Pull: with the approach leaned 50°
and the fingers' opening axis across the approach (turned one way for the right arm, the other for the left: the
other way round the right arm found IK for few of these poses), each arm reaches the grasp centre 3 and 9 cm above
the table from y = 0.06 to 0.27 m at x = ±0.10 and to 0.30 m at x = ±0.20; bars lying across the table at
(0.10, 0.23), (0.13, 0.24), (0.19, 0.15) and (-0.10, 0.22) were pulled 6-10 cm forward; a bar lying along y is not
reached (its far end lies past 0.33 m). Drag: leaned 30° with the fingers opening along -x (along +x, or leaned 20°
or 40°, most poses had no IK), bars lying along y at (0.10, 0.23), (0.13, 0.24), (0.19, 0.20) and (-0.10, 0.22) were
held and slid 10 cm forward, one turned 30° from y 5 cm; at (0.05, 0.22) the second 5 cm had no IK.

A tall object standing at the back is toppled towards the robot instead (``topple``): the closed fingers, with the
pull's lean, hook its far top edge and draw it forward until it falls; it then lies in front of where it stood and
is planned again from there. Probed with the standing bar: toppled from (0.12, 0.20), (0.15, 0.20), (0.17, 0.16),
(0.18, 0.17), (0.18, 0.22), (0.25, 0.22), (0.30, 0.15) by the right arm and from (-0.15, 0.18), (-0.20, 0.20) by the
left, landing 2-14 cm further forward and up to 9 cm further out; no IK with the hook at y >= 0.30 or within 0.10 of
x = 0 (the hand leaned 30° or 40° found no IK at all; leaned 58° or 65° its fingers rode over the edge).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial.transform import Rotation

from mallvi.graph.backends.rules.thinker.strategies import EE_ABOVE_GRASP_CENTRE_M, NUDGE_CENTRE_ABOVE_BOTTOM_M
from mallvi.graph.posture import is_tall
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
    return _frame_wxyz(a, f / float(np.linalg.norm(f)))


def _approach() -> tuple[float, float]:
    """The (y, z) components of the pull's approach axis."""
    t = math.radians(PULL_LEAN_DEG)
    return math.sin(t), -math.cos(t)


def _arms_within(x: float, arm_x_m: tuple[float, float]) -> list[str]:
    """The arms for which ``x`` lies in ``arm_x_m`` (on the arm's own side, mirrored for the left arm), the one on
    the object's side first."""
    lo, hi = arm_x_m
    arms = [a for a in ("right", "left") if lo <= (x if a == "right" else -x) <= hi]
    return sorted(arms, key=lambda a: 0 if (a == "right") == (x >= 0) else 1)


def pull_arms(obj: SceneObject) -> list[str]:
    """The arms that may pull ``obj`` (the one on its side first), none when it does not lie at the back."""
    x, y = obj.position_m[0], obj.position_m[1]
    far = y + obj.size_m[1] / 2 + PULL_CLEAR_M
    if y < PULL_FROM_Y_M or far > PULL_MAX_Y_M:
        return []
    return _arms_within(x, PULL_ARM_X_M)


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


DRAG_LEAN_DEG = 30.0
"""The drag's approach leans this far from straight down, towards the back of the table."""
DRAG_FINGERS = (-1.0, 0.0, 0.0)
"""The drag's finger opening axis (world): across a bar lying along y."""
DRAG_INSET_M = 0.04
"""The fingers close this far inside the object's near face (at most its middle)."""
DRAG_APPROACH_M = 0.08
"""The open gripper comes in along its approach from this far off the grasp point."""
DRAG_M = 0.10
DRAG_STEPS = 2
DRAG_LIFT_M = 0.01  # the held object is raised this much as the slide starts, so it does not catch on the table
DRAG_RISE_M = 0.06  # after letting go, the hand rises this much before going home
DRAG_MAX_Y_M = 0.26
"""The grasp point must lie in front of this (probed up to 0.24 m)."""
ALLOCATION_X_M = 0.10
"""The benchmark's arm-allocation rule: an arm does not grasp an object this far past x = 0 on the other arm's side.
A drag holds the object, so it keeps to the rule; a pull only pushes it, as the nudges do."""
DRAG_ARM_X_M = (-ALLOCATION_X_M, 0.25)


def _frame_wxyz(approach: np.ndarray, fingers: np.ndarray) -> list[float]:
    R = np.column_stack([approach, fingers, np.cross(approach, fingers)])
    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return [float(w), float(x), float(y), float(z)]


def drag_arms(obj: SceneObject) -> list[str]:
    """The arms that may drag ``obj`` (the one on its side first), none when it does not lie at the back."""
    x, y = obj.position_m[0], obj.position_m[1]
    grasp_y = y - obj.size_m[1] / 2 + min(DRAG_INSET_M, obj.size_m[1] / 2)
    if y < PULL_FROM_Y_M or grasp_y > DRAG_MAX_Y_M:
        return []
    return _arms_within(x, DRAG_ARM_X_M)


def drag(arm: str, obj: SceneObject, table_z: float) -> ActionPlan:
    """Open the gripper, come down leaned forward on ``obj``'s near end, close on it, slide it ``DRAG_M`` towards
    the robot, let go, rise and go home."""
    ox, oy, oz = obj.position_m
    bottom = max(table_z, oz - obj.size_m[2] / 2)
    gz = bottom + min(NUDGE_CENTRE_ABOVE_BOTTOM_M, obj.size_m[2] / 2)
    gy = oy - obj.size_m[1] / 2 + min(DRAG_INSET_M, obj.size_m[1] / 2)
    t = math.radians(DRAG_LEAN_DEG)
    a = np.array([0.0, math.sin(t), -math.cos(t)])
    pre = np.array([ox, gy, gz]) - a * (DRAG_APPROACH_M + EE_ABOVE_GRASP_CENTRE_M)
    step = -DRAG_M / DRAG_STEPS
    into = [float(v) * DRAG_APPROACH_M for v in a]
    slides = [SkillCall(skill="move_by_displacement", arm=arm,  # type: ignore[arg-type]
                        args={"y": step, "z": DRAG_LIFT_M if i == 0 else 0.0}) for i in range(DRAG_STEPS)]
    calls = [
        SkillCall(skill="open_gripper", arm=arm, object=obj.id),  # type: ignore[arg-type]
        SkillCall(skill="move_to_pose", arm=arm,  # type: ignore[arg-type]
                  target_pose=[*(float(v) for v in pre), *_frame_wxyz(a, np.array(DRAG_FINGERS))]),
        SkillCall(skill="move_by_displacement", arm=arm, args={"x": into[0], "y": into[1], "z": into[2]}),  # type: ignore[arg-type]
        SkillCall(skill="close_gripper", arm=arm),  # type: ignore[arg-type]
        *slides,
        SkillCall(skill="open_gripper", arm=arm),  # type: ignore[arg-type]
        SkillCall(skill="move_by_displacement", arm=arm, args={"z": DRAG_RISE_M}),  # type: ignore[arg-type]
        SkillCall(skill="back_to_origin", arm=arm),  # type: ignore[arg-type]
    ]
    return ActionPlan(calls=calls, strategy=f"drag {arm}", rationale=(
        f"{obj.id} at ({ox:.2f}, {oy:.2f}) lies at the back of the table, where no grasp or push reaches it: the {arm} "
        f"arm closes on its near end with its hand leaned forward and slides it {DRAG_M * 100:.0f} cm towards the "
        f"robot, to ({ox:.2f}, {oy - DRAG_M:.2f}); the subtask is planned again from there"))


TOPPLE_BELOW_TOP_M = 0.03
"""The hooking fingers' grasp centre lies this far below the object's top."""
TOPPLE_BEHIND_M = 0.015
"""... and this far behind its far face."""
TOPPLE_RISE_M = 0.05  # the fingers come down from this far above the hook
TOPPLE_DRAW_M = (0.0, -0.035, -0.01)
"""One step of the draw (world x, y, z): towards the robot and a little down, so the fingers keep their hold."""
TOPPLE_STEPS = 3
TOPPLE_MAX_Y_M = 0.27
"""The hook must lie in front of this (probed: 0.265 m reached, 0.305 m and 0.315 m not)."""
TOPPLE_ARM_X_M = (0.11, 0.32)
"""The x range (on the arm's own side, mirrored for the left arm) where an arm topples: probed from 0.12 to 0.30."""


def topple_arms(obj: SceneObject) -> list[str]:
    """The arms that may topple ``obj`` towards the robot (the one on its side first), none when it does not stand
    at the back."""
    x, y = obj.position_m[0], obj.position_m[1]
    hook_y = y + obj.size_m[1] / 2 + TOPPLE_BEHIND_M
    if y < PULL_FROM_Y_M or hook_y > TOPPLE_MAX_Y_M:
        return []
    return _arms_within(x, TOPPLE_ARM_X_M)


def topple(arm: str, obj: SceneObject) -> ActionPlan:
    """Close the gripper, come down with the hand leaned forward until the fingers hook ``obj``'s far top edge, draw
    it towards the robot until it falls, rise and go home."""
    ox, oy, oz = obj.position_m
    gz = oz + obj.size_m[2] / 2 - TOPPLE_BELOW_TOP_M
    gy = oy + obj.size_m[1] / 2 + TOPPLE_BEHIND_M
    ay, az = _approach()
    ee = [ox, gy - EE_ABOVE_GRASP_CENTRE_M * ay, gz + TOPPLE_RISE_M - EE_ABOVE_GRASP_CENTRE_M * az]
    dx, dy, dz = TOPPLE_DRAW_M
    calls = [
        SkillCall(skill="close_gripper", arm=arm, object=obj.id),  # type: ignore[arg-type]
        SkillCall(skill="move_to_pose", arm=arm, target_pose=[*ee, *pull_orientation_wxyz(arm)]),  # type: ignore[arg-type]
        SkillCall(skill="move_by_displacement", arm=arm, args={"z": -TOPPLE_RISE_M}),  # type: ignore[arg-type]
        *[SkillCall(skill="move_by_displacement", arm=arm, args={"x": dx, "y": dy, "z": dz})  # type: ignore[arg-type]
          for _ in range(TOPPLE_STEPS)],
        SkillCall(skill="move_by_displacement", arm=arm, args={"z": PULL_RISE_M}),  # type: ignore[arg-type]
        SkillCall(skill="back_to_origin", arm=arm),  # type: ignore[arg-type]
        SkillCall(skill="open_gripper", arm=arm),  # type: ignore[arg-type]
    ]
    return ActionPlan(calls=calls, strategy=f"topple {arm}", rationale=(
        f"{obj.id} stands at ({ox:.2f}, {oy:.2f}) at the back of the table, where no grasp or push reaches it: the "
        f"{arm} arm hooks its far top edge with its hand leaned forward and draws it towards the robot until it "
        "falls; the subtask is planned again from where it lies"))


def pulls(obj: SceneObject, table_z: float) -> list[ActionPlan]:
    """A pull by each arm that may make one (``pull_arms``) and a drag by each arm that may make one
    (``drag_arms``); the drags first for an object longer along y than along x (no hand gets behind its far end).
    For a tall object standing up, a topple by each arm that may make one (``topple_arms``) instead: the leaned hand
    cannot come down behind its foot (its wrist meets the object), the drag's fingers would come down on its top,
    and a pull at its foot would tip it over backwards."""
    if is_tall(obj):
        return [topple(a, obj) for a in topple_arms(obj)]
    from_behind = [pull(a, obj, table_z) for a in pull_arms(obj)]
    by_near_end = [drag(a, obj, table_z) for a in drag_arms(obj)]
    deep = obj.size_m[1] > obj.size_m[0]
    return by_near_end + from_behind if deep else from_behind + by_near_end
