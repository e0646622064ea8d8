"""The rig's motion core against what the twin found: the arm's own body and a held object in the depth cloud,
the depth noise on the table, the gripper's real shape, and paths the Piper cannot follow in a straight line.

Two emulated Pipers on python-can virtual buses; the guard is the rig's (``piper_safety``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pytest
from numpy.typing import NDArray

from mallvi.contracts.devices import DualArm
from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.contracts.skills import FailureKind
from mallvi.contracts.world_model import ObjectInfo
from mallvi.robot_drivers.calibration.calibration_files import mount_matrix
from mallvi.robot_drivers.piper.config_piper import PiperConfig
from mallvi.robot_drivers.piper.piper import PiperArm
from mallvi.robot_drivers.piper.piper_emulator import PiperEmulator
from mallvi.robot_drivers.rig.rig import piper_safety
from mallvi.robot_drivers.rig_skills.rig_skills import RigSkills, RigSkillsConfig
from mallvi.robot_drivers.safety.guard import SafetyGuard
from tests.fixtures.world_models import FixedWorld

TABLE_Z = 0.75
TALL = ObjectInfo("tall_block", "block", Pose((-0.2, 0.0, TABLE_Z + 0.10)), (0.06, 0.06, 0.20), "red")
CUBE = ObjectInfo("cube", "block", Pose((-0.2, 0.0, TABLE_Z + 0.02)), (0.04, 0.04, 0.04), "green")
FAST = RigSkillsConfig(ee_speed_m_s=0.4, step_m=0.01)


@dataclass
class Rig:
    dual: DualArm
    emus: dict[str, PiperEmulator]

    def skills(self, cloud: Callable[[], NDArray[np.float64]] | None = None,
               config: RigSkillsConfig = FAST) -> RigSkills:
        return RigSkills(self.dual, FixedWorld(TALL, CUBE), SafetyGuard(piper_safety(TABLE_Z)), config=config,
                         cloud_world=cloud)

    def sent(self) -> int:
        return sum(e.command_count() for e in self.emus.values())


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    tag = uuid.uuid4().hex[:6]
    emus = {side: PiperEmulator(f"cr_{side}_{tag}", object_width_m=0.05).start() for side in ("left", "right")}
    arms = {}
    mounts: tuple[tuple[ArmSide, float], ...] = (("left", -0.30), ("right", 0.30))
    for side, x in mounts:
        cfg = PiperConfig(side=side, can_name=f"cr_{side}_{tag}", bus_type="virtual", speed_percent=100,
                          base_pose_world=Pose.from_matrix(mount_matrix(x, -0.30, 0.95, 90.0)), motion_timeout_s=10.0,
                          feedback_timeout_s=5.0)
        arms[side] = PiperArm(cfg)
        arms[side].connect()
        arms[side].enable()
    yield Rig(DualArm(left=arms["left"], right=arms["right"]), emus)
    for a in arms.values():
        a.disconnect()
    for e in emus.values():
        e.close()


def _home(rig: Rig) -> None:
    skills = rig.skills()
    for side in ("left", "right"):
        skills.open_gripper(side)
        assert skills.back_to_origin(side).ok


def test_a_goal_the_piper_cannot_reach_in_a_straight_line_is_reached_by_a_joint_space_move(rig: Rig) -> None:
    _home(rig)
    start = rig.dual.left.ee_pose()
    goal = Pose.from_arrays(np.array([-0.6, 0.1, 1.1]), start.q)
    reach = RigSkillsConfig(ee_speed_m_s=0.4, step_m=0.02, check_reach=True)
    moved = rig.skills(config=reach).move_to_pose("left", goal.as_list())
    assert moved.ok, moved.message
    assert moved.data["commands"][-1]["joint_path"] is True
    assert rig.dual.left.ee_pose().p == pytest.approx(goal.p, abs=0.005)
    assert rig.skills(config=reach).back_to_origin("left").ok


def test_the_depth_points_of_a_held_tall_block_are_not_obstacles_to_its_own_place(rig: Rig) -> None:
    _home(rig)
    skills = rig.skills()

    def held_block_cloud() -> NDArray[np.float64]:
        """The camera's view of the block hanging in the left gripper: its faces from the grasp down."""
        tcp = skills.guard.tcp_point(rig.dual.left.ee_pose())
        drop = skills.held_drop_m("left")
        zs = np.linspace(0.0, drop, 20)
        face = [[tcp[0] + dx, tcp[1] - 0.03, tcp[2] - z] for z in zs for dx in np.linspace(-0.03, 0.03, 7)]
        return np.asarray(face if drop > 0 else np.empty((0, 3)))

    grasped = skills.grasp_actor("tall_block", "left")
    assert grasped.ok, grasped.message
    assert skills.held_drop_m("left") == pytest.approx(0.175, abs=1e-6)  # grasped 2.5 cm below its top
    skills.cloud_world = held_block_cloud
    placed = skills.place_actor("tall_block", "left", [-0.25, 0.05, TABLE_Z])
    assert placed.ok, placed.message
    assert skills.held_object("left") is None


def test_the_same_points_block_a_gripper_that_does_not_hold_them(rig: Rig) -> None:
    _home(rig)
    tcp = SafetyGuard(piper_safety(TABLE_Z)).tcp_point(rig.dual.left.ee_pose())
    column = np.array([[tcp[0], tcp[1] + 0.06 + 0.01 * k, tcp[2]] for k in range(10)])
    before = rig.sent()
    blocked = rig.skills(lambda: column).move_by_displacement("left", y=0.12)
    assert not blocked.ok and blocked.kind == FailureKind.REFUSED_BY_GUARD and "obstacle point" in blocked.message
    assert rig.sent() == before


def test_depth_noise_just_above_the_table_is_the_table_not_an_obstacle(rig: Rig) -> None:
    _home(rig)
    skills = rig.skills()
    # the table seen by the depth camera around a 4 cm cube: 8 mm of noise (2 sigma of a D435 at 1 m)
    noise = np.array([[x, y, TABLE_Z + 0.008] for x in np.linspace(-0.3, -0.1, 41) for y in np.linspace(-0.1, 0.1, 41)
                      if max(abs(x + 0.2), abs(y)) > 0.035])
    skills.cloud_world = lambda: noise
    grasped = skills.grasp_actor("cube", "left")
    assert grasped.ok, grasped.message
    assert skills.open_gripper("left").ok and skills.back_to_origin("left").ok
    thing = noise + np.array([0.0, 0.0, 0.02])  # 2.8 cm above the table is something the fingers would hit
    skills.cloud_world = lambda: thing
    refused = skills.grasp_actor("cube", "left")
    assert not refused.ok and refused.kind == FailureKind.REFUSED_BY_GUARD
    assert refused.message.startswith("approach:") and "obstacle point" in refused.message
