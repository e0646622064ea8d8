"""Geometry of standing a lying object up by a gravity pivot, shared by the simulated and the real skills.

The object is grasped from above on its axis, near one end, with the fingers across it. Lifted, with the grip
loosened, it turns about the finger axis until it hangs below the fingers. Two limits set where along the axis
to grasp: the swinging end's corners must clear the palm, and the centre of mass must lie far enough from the
grasp for gravity to turn the object.
"""

from __future__ import annotations

import math

END_GRASP_M = 0.035  # preferred distance of the grasp centre from the object's end, along its axis
MIN_END_GRASP_M = 0.012  # closer to the end a 2 cm finger pad would hang over it
PALM_MARGIN_M = 0.006  # the swinging end's corners stay this far from the palm
MIN_LEVER_M = 0.02  # the centre of mass at least this far from the grasp, or gravity barely turns the object
SWING_CLEARANCE_M = 0.03  # the hanging object's lower end above the surface it lay on
FINGER_SLACK_M = 0.004  # loosened fingers stand this far apart beyond the object's width
LYING_LENGTH_RATIO = 1.5  # a perceived box counts as a lying tall object when its long side is this x its height


def end_grasp_offset_m(length_m: float, thickness_m: float, palm_to_tcp_m: float) -> float | str:
    """How far from the object's end to grasp it, or why it cannot swing upright in this gripper.

    Args:
        length_m: the object's length along its axis.
        thickness_m: its extent across the axis in the plane it swings in (vertical while it lies).
        palm_to_tcp_m: from the palm, where the fingers start, to the grasp centre.
    """
    reach_m = palm_to_tcp_m - PALM_MARGIN_M
    if thickness_m / 2 >= reach_m:
        return f"it is {thickness_m * 100:.1f} cm thick: its end would hit the palm while it swings"
    d = min(END_GRASP_M, math.sqrt(reach_m**2 - (thickness_m / 2) ** 2), length_m / 2 - MIN_LEVER_M)
    if d < MIN_END_GRASP_M:
        return f"it is too short ({length_m * 100:.1f} cm) to swing upright from a grasp at its end"
    return d


def pivot_height_m(support_z_m: float, length_m: float, end_offset_m: float) -> float:
    """Height of the grasp centre at which the object, hanging from it, clears the surface it lay on."""
    return support_z_m + length_m - end_offset_m + SWING_CLEARANCE_M
