"""Collision-checked joint plans for the real arms with mplib, the depth point cloud as an obstacle.

Each arm gets an ``mplib.Planner`` on the simulator's Piper-kinematics URDF/SRDF (its forward kinematics match
piper_sdk's, and its ``ee_link`` is the driver's end-effector frame), placed at the calibrated mount. The camera's
point cloud is added to each planning world as an octree; a straight end-effector move is planned as an mplib
screw motion, which fails if any intermediate state collides with the cloud, the arm itself or leaves the joint
limits. An instance is the ``planner`` hook of ``RigSkills``.
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
        if status != "Success":
            return f"mplib screw plan failed ({status}): a collision with the point cloud or the arm itself, " \
                   "or a joint limit on the way"
        return np.asarray(raw["position"], dtype=float)
