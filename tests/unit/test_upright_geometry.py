"""Geometry behind the stand-up and the motions around it: where along a lying object to grasp it, how far a
joint may start past its limit, and how much spline overshoot the planner clips."""

from __future__ import annotations

import math

import numpy as np

from mallvi.robot_drivers.motion.pivot_grasp import END_GRASP_M, end_grasp_offset_m, pivot_height_m
from mallvi.robot_drivers.safety.guard import START_EXCURSION_RAD, SafetyConfig, SafetyGuard
from mallvi.sim_bridge.planning import SPLINE_OVERSHOOT_RAD, clip_spline_overshoot

PALM_TO_TCP_M = 0.06  # the simulated Piper gripper
LIMITS = np.array([[-1.0, 1.0], [0.0, 3.0], [-3.0, 0.0], [-1.7, 1.7], [-1.22, 1.22], [-2.0, 2.0]])


def test_a_bar_is_grasped_near_its_end_and_the_swinging_end_clears_the_palm() -> None:
    d = end_grasp_offset_m(0.20, 0.06, PALM_TO_TCP_M)
    assert d == END_GRASP_M
    assert isinstance(d, float) and math.hypot(d, 0.03) < PALM_TO_TCP_M, "the near end's corners pass the palm"
    assert pivot_height_m(0.75, 0.20, d) - (0.20 - d) > 0.75, "hanging, it clears the surface it lay on"


def test_objects_that_cannot_swing_in_this_gripper_are_told_apart() -> None:
    thick = end_grasp_offset_m(0.20, 0.12, PALM_TO_TCP_M)
    assert isinstance(thick, str) and "thick" in thick
    short = end_grasp_offset_m(0.05, 0.03, PALM_TO_TCP_M)
    assert isinstance(short, str) and "too short" in short


def _guard() -> SafetyGuard:
    return SafetyGuard(SafetyConfig(joint_limits_rad={"left": tuple(map(tuple, LIMITS)),  # type: ignore[arg-type]
                                                      "right": tuple(map(tuple, LIMITS))}))


def test_a_joint_pushed_a_little_past_its_limit_may_move_back_but_not_further_out() -> None:
    start = np.array([0.0, 1.0, -1.0, 0.0, 1.22 + 0.02, 0.0])  # contact pushed joint 5 2 cm past its limit
    back = np.linspace(start, [0.0, 1.0, -1.0, 0.0, 0.8, 0.0], 20)
    assert _guard().check_joint_path("left", back, 0.05) is None
    further = np.linspace(start, [0.0, 1.0, -1.0, 0.0, 1.22 + 0.04, 0.0], 20)
    assert "joint 5" in (_guard().check_joint_path("left", further, 0.05) or "")
    far = start.copy()
    far[4] = 1.22 + START_EXCURSION_RAD + 0.1  # far past the limit: no arm gets there by a nudge
    assert "joint 5" in (_guard().check_joint_path("left", np.linspace(far, back[-1], 20), 0.05) or "")


def test_a_small_spline_overshoot_is_clipped_a_large_excursion_is_left_for_the_guard() -> None:
    start = np.array([0.0, 1.0, -1.0, 0.0, 1.0, 0.0])
    path = np.linspace(start, [0.0, 1.0, -1.0, 0.0, 1.22, 0.0], 30)
    path[20:25, 4] = 1.227  # the spline bulges past joint 5's limit between two waypoints
    clipped = clip_spline_overshoot(path, start, LIMITS)
    assert float(clipped[:, 4].max()) == 1.22 and _guard().check_joint_path("left", clipped, 0.5) is None
    path[20:25, 4] = 1.22 + SPLINE_OVERSHOOT_RAD + 0.05
    assert np.array_equal(clip_spline_overshoot(path, start, LIMITS), path)
    assert "joint 5" in (_guard().check_joint_path("left", path, 0.5) or "")
