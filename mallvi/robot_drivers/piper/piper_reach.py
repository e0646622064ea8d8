"""Where a Piper's grasps reach over the table, as a ``ReachEnvelope`` per arm.

Measured on the simulated Piper (the same kinematics) with ``scripts/reach_map.py``, the two arms mounted 0.7 m
apart at the table's front edge. Standing grasps: the arm's own half to 0.05 m past the centre line for
y -0.25..0.15 (a little beyond the measured -0.20..0.10: the motion planner has the final word); at table height
the middle strip to 0.10 m past it for y <= 0. Leaned top-down grasps of an object on the table: from the front
edge 0.10 m past the centre line up to y = 0.15, then the arm's own half to y = 0.25 and its outer part (0.15 m
from the centre line) to the back edge at y = 0.30. A rig whose arms stand elsewhere measures its own envelope.
"""

from __future__ import annotations

from mallvi.contracts.geometry import ArmSide
from mallvi.contracts.station import ReachEnvelope


def piper_reach(side: ArmSide, centre_x_m: float = 0.0) -> ReachEnvelope:
    """The Piper's reach envelope for the ``side`` arm; ``centre_x_m`` is the x of the line between the arms."""
    return ReachEnvelope(side=side, centre_x_m=centre_x_m, y_range_m=(-0.25, 0.15), past_centre_m=0.05,
                         low_height_m=0.03, low_past_centre_m=0.10, low_max_y_m=0.0,
                         leaning_y_range_m=(-0.36, 0.30), leaning_bands=((0.15, -0.10), (0.25, 0.05), (0.30, 0.15)))
