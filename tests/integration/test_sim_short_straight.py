"""A straight move of a few millimetres at the wrist's singularity (joints 4 and 5 at 0, as IK often leaves the
Piper above a top-down grasp): mplib's screw planner stalls there, so the move is made by joint interpolation,
kept on the line. Before, the Tier 3 executor failed such a move with "no inverse-kinematics solution" when an
action closed the gripper at the pose just reached (report seeds 700072 and 700087 of place_bread_skillet_ee)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from mallvi.contracts.geometry import Pose
from mallvi.robot_drivers.motion import short_move
from mallvi.sim_bridge import planning
from mallvi.sim_bridge.world import SimWorld
from tests.integration.test_sim_skill_arguments import two_cubes_world

# Where the right arm stood on place_bread_skillet_ee seed 700072 (the same arm bases as TWO_CUBES), and the
# action's target 1.8 mm away: the bread's grasp pose, with the gripper closing.
Q_SINGULAR_RAD = np.array([0.41137, 2.39856, -0.74050, 4.5e-05, -9.1e-06, -0.43716])
TARGET = Pose((0.2469085, -0.0636904, 0.8840624), (0.2498617, -0.6614896, 0.2498624, 0.6614903))


@pytest.fixture(scope="module")
def world() -> Iterator[SimWorld]:
    yield from two_cubes_world()


def test_the_screw_planner_alone_stalls_there(world: SimWorld) -> None:
    planner = world.planners["right"]
    raw = planner._guarded_call(planner._planner.plan_screw, planner._base_inv * planning._mp_pose(TARGET),
                                planner._full(Q_SINGULAR_RAD),
                                time_step=planning.PATH_DT_S, qpos_step=0.05)  # fmt: skip
    assert raw["status"] != "Success"  # the case this fall-back exists for


def test_the_short_straight_move_is_planned_on_the_line(world: SimWorld) -> None:
    planner = world.planners["right"]
    start = planner.fk(Q_SINGULAR_RAD)
    plan = planner.plan_straight(TARGET, Q_SINGULAR_RAD)
    assert plan.ok, plan.message
    assert np.allclose(plan.path_rad[0], Q_SINGULAR_RAD)
    assert np.linalg.norm(planner.fk(plan.path_rad[-1]).p - np.asarray(TARGET.p)) < 1e-3
    line = np.asarray(TARGET.p) - start.p
    for q in plan.path_rad:
        p = planner.fk(q).p - start.p
        off_line_m = np.linalg.norm(p - line * np.clip(np.dot(p, line) / np.dot(line, line), 0.0, 1.0))
        assert off_line_m <= short_move.SHORT_OFF_LINE_M + 1e-6
    assert float(np.max(np.abs(np.diff(plan.path_rad, axis=0)))) <= planning.SHORT_STEP_RAD + 1e-9


def test_the_arm_gets_there(world: SimWorld) -> None:
    world.arms["right"].reset_joints(Q_SINGULAR_RAD)
    world.step(50)
    assert world.skills.motion.move("right", TARGET, "straight") is None
    assert np.linalg.norm(world.arms["right"].ee_pose().p - np.asarray(TARGET.p)) < 1.5e-3


def test_a_longer_stalled_move_is_not_interpolated(world: SimWorld) -> None:
    planner = world.planners["right"]
    far = Pose(tuple(np.asarray(TARGET.p) + np.array([-0.01, 0.02, 0.0])), TARGET.q)
    raw = planner._guarded_call(planner._planner.plan_screw, planner._base_inv * planning._mp_pose(far),
                                planner._full(Q_SINGULAR_RAD),
                                time_step=planning.PATH_DT_S, qpos_step=0.05)  # fmt: skip
    plan = planner.plan_straight(far, Q_SINGULAR_RAD)
    assert plan.ok == (raw["status"] == "Success")
    assert "interpolation" not in plan.message
