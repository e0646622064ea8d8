"""The rig's mplib planner at the wrist's singularity: a straight move of ~2 mm, where mplib's screw planner
stalls, is made by joint interpolation kept on the line; a longer stalled move is refused with a message that
names the singularity among the causes."""

from __future__ import annotations

import numpy as np
import pytest

from mallvi.contracts.geometry import Pose
from mallvi.robot_drivers.calibration.calibration_files import mount_matrix
from mallvi.robot_drivers.motion.short_move import SHORT_OFF_LINE_M
from mallvi.robot_drivers.rig_skills.rig_planner import MplibRigPlanner, _mp_pose
from tests.integration.test_sim_short_straight import Q_SINGULAR_RAD, TARGET

DT_S = 0.02
# From where the arm stands at Q_SINGULAR_RAD, a 2 mm move in this direction (world frame, m) stalls the rig
# planner's screw motion (its step is finer than the simulator's, so it stalls in other directions than TARGET's)
STALLING_STEP_M = np.array([0.00175, -0.00085, 0.00045])
STALLING_LONG_STEP_M = np.array([0.0172, -0.01003, 0.02244])  # 3 cm, stalls as well


@pytest.fixture(scope="module")
def planner() -> MplibRigPlanner:
    # the simulator's arm mounts, where Q_SINGULAR_RAD and TARGET were recorded
    return MplibRigPlanner({"left": Pose.from_matrix(mount_matrix(-0.35, -0.30, 0.95, 90.0)),
                            "right": Pose.from_matrix(mount_matrix(0.35, -0.30, 0.95, 90.0))})


def _fk(planner: MplibRigPlanner, q_arm: np.ndarray) -> Pose:
    mp = planner._planners["right"]
    q = np.zeros(len(mp.user_joint_names))
    q[list(mp.move_group_joint_indices)] = q_arm
    mp.pinocchio_model.compute_forward_kinematics(q)
    T_base_ee = mp.pinocchio_model.get_link_pose(mp.link_name_2_idx[mp.move_group]).to_transformation_matrix()
    return Pose.from_matrix(mp.robot.get_base_pose().to_transformation_matrix() @ T_base_ee)


def _screw_status(planner: MplibRigPlanner, target: Pose) -> str:
    mp = planner._planners["right"]
    q = np.zeros(len(mp.user_joint_names))
    q[list(mp.move_group_joint_indices)] = Q_SINGULAR_RAD
    return str(mp.plan_screw(_mp_pose(target), q, qpos_step=0.02, time_step=DT_S)["status"])


def _target(planner: MplibRigPlanner, step_m: np.ndarray) -> Pose:
    return Pose(tuple(_fk(planner, Q_SINGULAR_RAD).p + step_m), TARGET.q)


def test_a_short_move_at_the_singularity_is_planned_on_the_line(planner: MplibRigPlanner) -> None:
    target = _target(planner, STALLING_STEP_M)
    assert _screw_status(planner, target) != "Success"  # the case the fall-back exists for
    start = _fk(planner, Q_SINGULAR_RAD)
    path = planner("right", [target], Q_SINGULAR_RAD, DT_S)
    assert not isinstance(path, str), path
    assert np.allclose(path[0], Q_SINGULAR_RAD)
    assert np.linalg.norm(_fk(planner, path[-1]).p - np.asarray(target.p)) < 1e-3
    line = np.asarray(target.p) - start.p
    for q in path:
        p = _fk(planner, q).p - start.p
        off_line_m = np.linalg.norm(p - line * np.clip(np.dot(p, line) / np.dot(line, line), 0.0, 1.0))
        assert off_line_m <= SHORT_OFF_LINE_M + 1e-6
    assert float(np.max(np.abs(np.diff(path, axis=0)))) <= 0.5 * planner.joint_vel_limit_rad_s * DT_S + 1e-9


def test_a_longer_stalled_move_is_refused_naming_the_singularity(planner: MplibRigPlanner) -> None:
    far = _target(planner, STALLING_LONG_STEP_M)
    assert _screw_status(planner, far) != "Success"
    refusal = planner("right", [far], Q_SINGULAR_RAD, DT_S)
    assert isinstance(refusal, str)
    assert "singularity" in refusal
