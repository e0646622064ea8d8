"""Property-based tests of the safety guard's refusals (workspace, speed, clearance, point cloud, NaN)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mallvi.contracts.geometry import Pose
from mallvi.robot_drivers.safety.guard import SafetyConfig, SafetyGuard

GUARD = SafetyGuard(SafetyConfig(table_top_z_m=0.75))
DOWN = (0.7071068, 0.0, 0.7071068, 0.0)  # end-effector x axis (approach) pointing down
LO, HI = (np.array(v) for v in GUARD.config.workspace_m["left"])

inside = st.tuples(st.floats(-0.6, 0.2), st.floats(-0.4, 0.3), st.floats(1.0, 1.3))
bad_float = st.sampled_from([math.nan, math.inf, -math.inf])


@settings(deadline=None)  # the first example pays for scipy's lazy imports
@given(inside, st.integers(0, 2), st.sampled_from([-1, 1]), st.floats(0.01, 2.0))
def test_outside_the_workspace_is_refused(p: tuple[float, float, float], axis: int, sign: int, beyond: float) -> None:
    q = np.array(p)
    q[axis] = (HI[axis] + beyond) if sign > 0 else (LO[axis] - beyond)
    assert GUARD.check_pose("left", Pose.from_arrays(q, DOWN)) is not None


@settings(deadline=None)  # the first example pays for scipy's lazy imports
@given(inside)
def test_inside_the_workspace_and_above_the_table_is_allowed(p: tuple[float, float, float]) -> None:
    assert GUARD.check_pose("left", Pose.from_arrays(p, DOWN)) is None


@settings(deadline=None)  # the first example pays for scipy's lazy imports
@given(inside, st.integers(0, 6), bad_float)
def test_nan_and_inf_poses_are_refused(p: tuple[float, float, float], index: int, bad: float) -> None:
    values = [*p, *DOWN]
    values[index] = bad
    pose = Pose(tuple(values[:3]), tuple(values[3:]))  # type: ignore[arg-type]
    assert GUARD.check_pose("left", pose) is not None
    assert GUARD.check_values("action", values) is not None


@settings(deadline=None)  # the first example pays for scipy's lazy imports
@given(inside, st.floats(1.05, 10.0), st.floats(0.02, 0.2))
def test_too_fast_end_effector_paths_are_refused(p: tuple[float, float, float], factor: float, dt: float) -> None:
    start = Pose.from_arrays(p, DOWN)
    step = GUARD.config.max_ee_speed_m_s * factor * dt
    goal = Pose.from_arrays(np.array(p) + np.array([0.0, 0.0, -min(step, 0.1)]), DOWN)
    speed = float(np.linalg.norm(goal.p - start.p)) / dt
    why = GUARD.check_ee_path("left", [goal], dt, current=start)
    if speed > GUARD.config.max_ee_speed_m_s * 1.0001:
        assert why is not None and "too fast" in why
    else:
        assert why is None


@settings(deadline=None)  # the first example pays for scipy's lazy imports
@given(st.floats(1.01, 5.0), st.integers(0, 5))
def test_too_fast_joint_paths_are_refused(factor: float, joint: int) -> None:
    cfg = GUARD.config
    dt = 0.02
    step = min(cfg.max_joint_speed_rad_s * factor * dt, cfg.max_joint_step_rad * 0.99)
    path = np.zeros((5, 6))
    path[:, joint] = np.arange(5) * step
    why = GUARD.check_joint_path("left", path, dt)
    assert (why is not None) == (step / dt > cfg.max_joint_speed_rad_s)


@settings(deadline=None)  # the first example pays for scipy's lazy imports
@given(inside, st.floats(0.0, 0.095), st.floats(0.0, 2 * math.pi))
def test_grippers_closer_than_the_clearance_are_refused(p: tuple[float, float, float], d: float, a: float) -> None:
    mine = Pose.from_arrays(p, DOWN)
    other = Pose.from_arrays(np.array(p) + d * np.array([math.cos(a), math.sin(a), 0.0]), DOWN)
    assert GUARD.check_clearance("left", mine, other) is not None


@settings(deadline=None)  # the first example pays for scipy's lazy imports
@given(inside, st.floats(0.12, 0.5))
def test_grippers_far_apart_are_allowed(p: tuple[float, float, float], d: float) -> None:
    mine = Pose.from_arrays(p, DOWN)
    other = Pose.from_arrays(np.array(p) + np.array([d, 0.0, 0.0]), DOWN)
    assert GUARD.check_clearance("left", mine, other) is None


@settings(max_examples=60, deadline=None)
@given(inside, st.tuples(st.floats(-0.2, 0.2), st.floats(-0.2, 0.2), st.floats(-0.15, 0.0)),
       st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_a_cloud_point_on_the_swept_gripper_is_a_collision(
    p: tuple[float, float, float], d: tuple[float, float, float], s: float, along: float
) -> None:
    start = Pose.from_arrays(p, DOWN)
    goal = Pose.from_arrays(np.array(p) + np.array(d), DOWN)
    # a point somewhere on the gripper segment (ee -> grasp centre) at fraction s of the motion
    ee = start.p + s * (goal.p - start.p)
    point = ee + along * GUARD.config.tcp_offset_m * np.array([0.0, 0.0, -1.0])
    cloud = np.vstack([point, point + np.array([5.0, 5.0, 5.0])])
    cfg = GUARD.config
    assert cfg.table_top_z_m is not None
    if point[2] <= cfg.table_top_z_m + cfg.table_margin_m:
        # the cloud check leaves points at the table plane to the table check, which refuses such a path's end
        assert GUARD.check_pose("left", goal) is not None
    else:
        assert GUARD.check_path_against_cloud("left", [start, goal], cloud) is not None
    assert GUARD.check_path_against_cloud("left", [start, goal], cloud[1:]) is None
    # the object to be grasped does not count as an obstacle
    assert GUARD.check_path_against_cloud("left", [start, goal], cloud[:1],
                                          ignore_boxes=[(point, np.full(3, 0.01))]) is None
