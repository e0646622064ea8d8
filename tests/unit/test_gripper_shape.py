"""The rig guard's gripper model in the depth-cloud check: boxes of the Piper gripper instead of a capsule."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mallvi.contracts.geometry import Pose
from mallvi.robot_drivers.rig.rig import piper_safety
from mallvi.robot_drivers.rig_skills.rig_geometry import pose_from, top_down_rotation
from mallvi.robot_drivers.rig_skills.rig_skills import is_square
from mallvi.robot_drivers.safety.guard import SafetyConfig, SafetyGuard

TABLE_Z = 0.75


def _top_down(x: float, y: float, z: float, yaw: float = 0.0) -> Pose:
    return pose_from(np.array([x, y, z]), top_down_rotation(yaw))


def test_a_block_3_5_cm_beside_the_fingers_is_clear_for_the_piper_gripper_but_not_for_a_capsule() -> None:
    # fingers open along world y (yaw 90°); a neighbour 3.5 cm away along x, at finger height
    path = [_top_down(0.0, 0.0, TABLE_Z + 0.02 + 0.12 + dz, math.pi / 2) for dz in np.linspace(0.1, 0.0, 11)]
    neighbour = np.array([[0.035 + dx, dy, TABLE_Z + dz] for dx in (0.0, 0.02) for dy in np.linspace(-0.02, 0.02, 5)
                          for dz in np.linspace(0.015, 0.04, 6)])
    piper = SafetyGuard(piper_safety(TABLE_Z))
    capsule = SafetyGuard(SafetyConfig(table_top_z_m=TABLE_Z))
    assert piper.check_path_against_cloud("left", path, neighbour) is None
    why = capsule.check_path_against_cloud("left", path, neighbour)
    assert why is not None and "obstacle point" in why


@pytest.mark.parametrize("offset_m", [0.0, 0.03, 0.045])
def test_a_point_between_or_at_the_open_fingers_is_a_collision(offset_m: float) -> None:
    path = [_top_down(0.0, 0.0, TABLE_Z + 0.16, 0.0)]  # fingers open along world x
    tip = np.array([[offset_m, 0.0, TABLE_Z + 0.16 - 0.125]])
    why = SafetyGuard(piper_safety(TABLE_Z)).check_path_against_cloud("left", path, tip)
    assert why is not None and "waypoint 0" in why


def test_the_gripper_body_is_wider_than_the_fingers_along_the_opening() -> None:
    path = [_top_down(0.0, 0.0, TABLE_Z + 0.2, 0.0)]
    beside_body = np.array([[0.06, 0.0, TABLE_Z + 0.2 - 0.03]])  # 6 cm along the opening, at the body
    beside_tips = np.array([[0.065, 0.0, TABLE_Z + 0.2 - 0.125]])  # 6.5 cm along the opening, at the tips
    guard = SafetyGuard(piper_safety(TABLE_Z))
    assert guard.check_path_against_cloud("left", path, beside_body) is not None
    assert guard.check_path_against_cloud("left", path, beside_tips) is None


def test_a_square_footprint_may_be_grasped_across_either_side() -> None:
    assert is_square(np.array([0.025, 0.025, 0.025]))
    assert is_square(np.array([0.025, 0.028, 0.1]))
    assert not is_square(np.array([0.03, 0.015, 0.1]))
