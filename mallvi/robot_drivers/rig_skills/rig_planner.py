"""Collision-checked joint plans for the real arms with mplib, the depth point cloud as an obstacle.

Each arm gets an ``mplib.Planner`` on the simulator's Piper-kinematics URDF/SRDF (its forward kinematics match
piper_sdk's, and its ``ee_link`` is the driver's end-effector frame), placed at the calibrated mount. The camera's
point cloud is added to each planning world as an octree; a straight end-effector move is planned as an mplib
screw motion, which fails if any intermediate state collides with the cloud, the arm itself or leaves the joint
limits; a move of under 1 cm where it stalls (the wrist's singularity) is made by joint interpolation checked
against the same world (``short_move``). An instance is the ``planner`` hook of ``RigSkills``.
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Mapping, Sequence

import mplib
import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.robot_drivers.motion.short_move import is_short, joint_line

log = logging.getLogger(__name__)


def _mp_pose(pose: Pose) -> mplib.Pose:
    return mplib.Pose(np.asarray(pose.position_m, dtype=float), np.asarray(pose.quat_wxyz, dtype=float))


class MplibRigPlanner:
    """Screw-motion planner per arm with the depth cloud as an obstacle (``RigSkills``' planner hook).

    Args:
        base_poses: each arm's mount in the world (T_world_base, from the calibration).
        urdf_path, srdf_path, ee_link: the arm description; default: the simulator's Piper-kinematics arm.
        cloud_resolution_m: octree resolution of the point-cloud obstacle.
        joint_vel_limit_rad_s, joint_acc_limit_rad_s2: limits for the time parameterisation.
    """

    def __init__(self, base_poses: Mapping[ArmSide, Pose], urdf_path: str | None = None,
                 srdf_path: str | None = None, ee_link: str = "ee_link", cloud_resolution_m: float = 0.01,
                 joint_vel_limit_rad_s: float = 1.0, joint_acc_limit_rad_s2: float = 2.0) -> None:
        if urdf_path is None or srdf_path is None:
            from mallvi.robot_drivers.embodiment.loader import default_embodiment

            emb = default_embodiment()
            urdf_path, srdf_path, ee_link = str(emb.urdf_path), str(emb.srdf_path), emb.ee_link
        self.cloud_resolution_m = cloud_resolution_m
        self.joint_vel_limit_rad_s = joint_vel_limit_rad_s
        self._planners: dict[ArmSide, mplib.Planner] = {}
        for side, base in base_poses.items():
            with contextlib.redirect_stdout(io.StringIO()):  # mplib reports the model it loads on stdout
                planner = mplib.Planner(urdf=urdf_path, srdf=srdf_path, move_group=ee_link)
            n = len(planner.move_group_joint_indices)
            planner.joint_vel_limits = np.full(n, joint_vel_limit_rad_s)
            planner.joint_acc_limits = np.full(n, joint_acc_limit_rad_s2)
            planner.set_base_pose(_mp_pose(base))
            self._planners[side] = planner

    def set_point_cloud(self, points_world: NDArray[np.float64]) -> None:
        """Replace the obstacle cloud (N×3, world frame) in every arm's planning world."""
        pts = np.asarray(points_world, dtype=float).reshape(-1, 3)
        pts = pts[np.all(np.isfinite(pts), axis=1)]
        for planner in self._planners.values():
            planner.update_point_cloud(pts, resolution=self.cloud_resolution_m)

    def __call__(self, side: ArmSide, ee_path: Sequence[Pose], q_start: NDArray[np.float64],
                 dt_s: float) -> NDArray[np.float64] | str:
        """A joint path (N×6, one row every ``dt_s``) moving the end effector straight to ``ee_path[-1]``."""
        planner = self._planners.get(side)
        if planner is None:
            return f"no planner for the {side} arm"
        q_full = np.zeros(len(planner.user_joint_names))
        idx = list(planner.move_group_joint_indices)
        q_full[idx] = np.asarray(q_start, dtype=float)
        with contextlib.redirect_stdout(io.StringIO()):
            raw = planner.plan_screw(_mp_pose(ee_path[-1]), q_full, qpos_step=0.02, time_step=dt_s)
        status = str(raw.get("status", "no status"))
        if status == "Success":
            return np.asarray(raw["position"], dtype=float)
        short = self._short_move(planner, ee_path[-1], q_full, dt_s)
        if short is not None:
            return short
        return f"mplib screw plan failed ({status}): a collision with the point cloud or the arm itself, " \
               "a joint limit on the way, or the wrist's singularity (joints 4 and 5 near 0)"

    def _short_move(self, planner: mplib.Planner, goal: Pose, q_full: NDArray[np.float64],
                    dt_s: float) -> NDArray[np.float64] | None:
        """A straight move of under 1 cm whose screw plan stalled, by joint interpolation (``short_move``) to the
        nearest collision-free IK solution, the waypoints checked against the cloud and the arm itself."""
        idx = list(planner.move_group_joint_indices)
        model = planner.pinocchio_model
        ee_index = planner.link_name_2_idx[planner.move_group]
        T_world_base = planner.robot.get_base_pose().to_transformation_matrix()

        def fk(q_arm: NDArray[np.float64]) -> Pose:
            q = q_full.copy()
            q[idx] = q_arm
            model.compute_forward_kinematics(q)
            return Pose.from_matrix(T_world_base @ model.get_link_pose(ee_index).to_transformation_matrix())

        def collides(q_arm: NDArray[np.float64]) -> bool:
            planner.planning_world.set_qpos_all(q_arm)
            return bool(planner.planning_world.is_state_colliding())

        q_start = q_full[idx]
        start = fk(q_start)
        if not is_short(start, goal):
            return None
        goal_in_base = planner.robot.get_base_pose().inv() * _mp_pose(goal)
        with contextlib.redirect_stdout(io.StringIO()):
            status, q_ik = planner.IK(goal_in_base, q_full, return_closest=True)
        if status != "Success" or q_ik is None:
            return None
        max_step_rad = 0.5 * self.joint_vel_limit_rad_s * dt_s
        return joint_line(q_start, np.asarray(q_ik, dtype=float)[idx], start, goal, fk, collides, max_step_rad)
