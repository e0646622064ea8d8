"""mplib plans with the depth cloud as an obstacle, executed as joint paths on emulated Pipers."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator

import numpy as np
import pytest

from mallvi.contracts.devices import DualArm
from mallvi.contracts.geometry import Pose
from mallvi.contracts.skills import FailureKind
from mallvi.contracts.world_model import ObjectInfo
from mallvi.robot_drivers.calibration.calibration_files import mount_matrix
from mallvi.robot_drivers.piper.config_piper import PIPER_JOINT_LIMITS_RAD, PiperConfig
from mallvi.robot_drivers.piper.piper import PiperArm
from mallvi.robot_drivers.piper.piper_emulator import PiperEmulator
from mallvi.robot_drivers.rig_skills.rig_planner import MplibRigPlanner
from mallvi.robot_drivers.rig_skills.rig_skills import RigSkills, RigSkillsConfig
from mallvi.robot_drivers.safety.guard import SafetyConfig, SafetyGuard

HOME_DEG = [math.degrees(v) for v in (0.0, 1.439, -0.484, 0.0, 0.703, 0.0)]


class NoObjects:
    def object_names(self) -> list[str]:
        return []

    def get_object(self, name: str) -> ObjectInfo:
        raise KeyError(name)


@pytest.fixture(scope="module")
def planned_rig() -> Iterator[tuple[RigSkills, MplibRigPlanner, DualArm, PiperEmulator]]:
    tag = uuid.uuid4().hex[:6]
    mounts = {"left": Pose.from_matrix(mount_matrix(-0.30, -0.30, 0.95, 90.0)),
              "right": Pose.from_matrix(mount_matrix(0.30, -0.30, 0.95, 90.0))}
    emus = {s: PiperEmulator(f"plan_{s}_{tag}").start() for s in mounts}
    arms = {}
    for side, emu in emus.items():
        emu.set_joints_deg(HOME_DEG)
        arms[side] = PiperArm(PiperConfig(side=side, can_name=f"plan_{side}_{tag}", bus_type="virtual",
                                          base_pose_world=mounts[side], speed_percent=100, motion_timeout_s=10.0,
                                          feedback_timeout_s=5.0))
        arms[side].connect()
        arms[side].enable()
    dual = DualArm(left=arms["left"], right=arms["right"])
    planner = MplibRigPlanner(mounts)
    limits = tuple(PIPER_JOINT_LIMITS_RAD)
    guard = SafetyGuard(SafetyConfig(table_top_z_m=0.75, joint_limits_rad={"left": limits, "right": limits}))
    skills = RigSkills(dual, NoObjects(), guard, planner=planner, config=RigSkillsConfig(ee_speed_m_s=0.2))
    yield skills, planner, dual, emus["left"]
    for a in arms.values():
        a.disconnect()
    for e in emus.values():
        e.close()


def test_planned_move_runs_as_joint_path_and_lands_on_the_target(
        planned_rig: tuple[RigSkills, MplibRigPlanner, DualArm, PiperEmulator]) -> None:
    skills, _, dual, emu = planned_rig
    start = dual.left.ee_pose()
    goal = Pose.from_arrays(start.p + np.array([0.03, 0.05, -0.05]), start.q)
    n_pose_frames = len(emu.frames_with_id(0x152))
    result = skills.move_to_pose("left", goal.as_list())
    assert result.ok, result.message
    assert len(emu.frames_with_id(0x152)) == n_pose_frames  # joint control, not end-pose control
    assert emu.frames_with_id(0x155)
    # planned on the URDF, executed through piper_sdk units, measured with the SDK's kinematics: same place
    assert np.linalg.norm(dual.left.ee_pose().p - goal.p) < 0.005


def test_point_cloud_in_the_way_makes_the_plan_fail(
        planned_rig: tuple[RigSkills, MplibRigPlanner, DualArm, PiperEmulator]) -> None:
    skills, planner, dual, emu = planned_rig
    start = dual.left.ee_pose()
    goal = Pose.from_arrays(start.p + np.array([0.0, 0.0, -0.10]), start.q)
    tcp_mid = skills.guard.tcp_point(start) + np.array([0.0, 0.0, -0.06])  # under the gripper, on the way down
    slab = np.array([tcp_mid + np.array([dx, dy, 0.0]) for dx in np.linspace(-0.05, 0.05, 11)
                     for dy in np.linspace(-0.05, 0.05, 11)])
    planner.set_point_cloud(slab)
    before = emu.command_count()
    try:
        result = skills.move_to_pose("left", goal.as_list())
    finally:
        planner.set_point_cloud(np.zeros((0, 3)))
    assert not result.ok and "mplib screw plan failed" in result.message and result.kind == FailureKind.NO_PLAN
    assert emu.command_count() == before
    assert skills.move_to_pose("left", goal.as_list()).ok  # the same move once the obstacle is gone


class OneCube:
    CUBE = ObjectInfo("cube", "cube", Pose((-0.30, 0.02, 0.77)), (0.04, 0.04, 0.04), "red")

    def object_names(self) -> list[str]:
        return ["cube"]

    def get_object(self, name: str) -> ObjectInfo:
        if name != "cube":
            raise KeyError(name)
        return self.CUBE


def test_grasp_with_mplib_and_the_depth_cloud_of_the_target(
        planned_rig: tuple[RigSkills, MplibRigPlanner, DualArm, PiperEmulator]) -> None:
    skills, planner, dual, emu = planned_rig
    emu.object_width_m = 0.03  # the emulated fingers stall on a 3 cm object
    # what the depth camera sees: the table top and the cube's top face (the target, not an obstacle)
    g = np.linspace(-0.5, 0.5, 41)
    table = np.array([[x, y, 0.75] for x in g for y in g])
    cube_top = np.array([[-0.30 + dx, 0.02 + dy, 0.79] for dx in np.linspace(-0.02, 0.02, 5)
                         for dy in np.linspace(-0.02, 0.02, 5)])
    cloud = np.vstack([table, cube_top])
    grasping = RigSkills(dual, OneCube(), skills.guard, planner=planner, cloud_world=lambda: cloud,
                         config=RigSkillsConfig(ee_speed_m_s=0.2))
    try:
        result = grasping.grasp_actor("cube", "left")
    finally:
        planner.set_point_cloud(np.zeros((0, 3)))
        emu.object_width_m = None
    assert result.ok, result.message
    assert dual.left.ee_pose().p == pytest.approx([-0.30, 0.02, 0.77 + 0.12 + 0.08], abs=0.005)
