"""Motion settings of the real-rig skills (``RigSkills``, ``rig_upright``) and the command log's entry type."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

Command = dict[str, Any]
"""One planned or sent command, as logged in ``SkillResult.data["commands"]``."""


@dataclass(frozen=True)
class RigSkillsConfig:
    """Motion settings of the real-rig skills.

    Attributes:
        dry_run: plan and check every command but send none.
        step_m: spacing of end-effector waypoints.
        ee_speed_m_s: commanded end-effector speed (must not exceed the guard's max_ee_speed_m_s).
        grasp_below_top_m: the grasp centre goes this far below the object's top (at most to its centre).
        min_grasp_opening: after closing, an opening below this means the fingers closed on nothing.
        lift_m: lift after a grasp and retreat after a place.
        palm_to_tcp_m: from the gripper's palm (where the fingers start) to the grasp centre; measure it on your
            gripper (``upright_actor`` keeps a swinging object's end clear of the palm with it).
        swing_dwell_s: how long ``upright_actor`` keeps the grip loose while the object swings upright.
        check_reach: solve the Piper's inverse kinematics along every path before sending it; a path the arm
            cannot follow is turned in place first or refused, instead of stopping the arm with "no IK solution".
    """

    dry_run: bool = False
    step_m: float = 0.01
    ee_speed_m_s: float = 0.08
    grasp_below_top_m: float = 0.025
    min_grasp_opening: float = 0.05
    lift_m: float = 0.08
    palm_to_tcp_m: float = 0.06
    swing_dwell_s: float = 1.5
    check_reach: bool = False

    def __post_init__(self) -> None:
        for name in ("step_m", "ee_speed_m_s", "grasp_below_top_m", "min_grasp_opening", "lift_m", "palm_to_tcp_m",
                     "swing_dwell_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number, got {value!r}")
