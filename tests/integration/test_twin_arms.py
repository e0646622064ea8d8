"""The twin's arms: the rig's Piper driver over python-can's virtual bus moves the SAPIEN arms."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

import numpy as np
import pytest

from mallvi.contracts.errors import DriverError
from mallvi.contracts.geometry import Pose
from mallvi.sim_bridge import layout
from mallvi.sim_bridge.world import SimWorld
from mallvi.twin.arms import TwinArms, connect_twin_arms

TOP_DOWN = layout.top_down_quat_wxyz(math.pi / 2)  # fingers open along world y


@pytest.fixture(scope="module")
def twin() -> Iterator[tuple[SimWorld, TwinArms]]:
    world = SimWorld.create("blocks_free", 3, render=False)
    arms = connect_twin_arms(world)
    yield world, arms
    arms.close()
    world.close()


def _centre(world: SimWorld, name: str) -> np.ndarray:
    return np.asarray(world.objects[name].info().points["center"].position_m, dtype=float)


def _above(c: np.ndarray, dz_m: float) -> tuple[float, float, float]:
    return float(c[0]), float(c[1]), float(c[2] + dz_m)


def test_a_joint_move_over_can_moves_the_simulated_arm_in_simulated_time(twin: tuple[SimWorld, TwinArms]) -> None:
    world, arms = twin
    arm = arms.arm("right")
    q_goal = arm.joint_positions_rad() + np.array([-0.3, 0.1, -0.1, 0.0, 0.1, 0.0])
    sim_before = world.sim_time_s
    arm.move_joints(q_goal)
    assert np.max(np.abs(world.arms["right"].joint_positions_rad() - q_goal)) < math.radians(1.0)
    assert arms.emulators["right"].frames_with_id(0x155), "no joint command went over the CAN bus"
    # 0.3 rad at 60 % of 180°/s takes ~0.16 s of simulated time, whatever the machine's speed.
    assert 0.1 < world.sim_time_s - sim_before < 1.0
    # The driver's end-effector pose (mount × Piper FK × tool) is where the simulated end effector is.
    assert np.linalg.norm(arm.ee_pose().p - world.arms["right"].ee_pose().p) < 1e-3


def test_closing_the_gripper_over_can_grasps_a_block_and_lifting_carries_it(twin: tuple[SimWorld, TwinArms]) -> None:
    world, arms = twin
    arm = arms.arm("left")
    c = _centre(world, "green_block")
    arm.move_to_pose(Pose(_above(c, 0.22), TOP_DOWN))  # firmware IK, end-pose mode
    arm.follow_ee_path([Pose(_above(c, dz), TOP_DOWN) for dz in np.linspace(0.21, 0.12, 10)], 0.05)
    assert np.linalg.norm(world.arms["left"].tcp_pose().p - c) < 0.01
    arm.set_gripper(0.0)
    assert world.grasped_object("left") == "green_block"
    assert arm.gripper_opening() * 0.08 == pytest.approx(0.05, abs=0.004)  # the fingers stopped on the 5 cm block
    arm.move_to_pose(Pose(_above(c, 0.25), TOP_DOWN))
    assert _centre(world, "green_block")[2] > c[2] + 0.1
    arm.set_gripper(1.0)
    assert world.grasped_object("left") is None
    world.step(250)
    assert _centre(world, "green_block")[2] == pytest.approx(c[2], abs=0.005)  # back on the table


def test_an_unreachable_end_pose_is_reported_as_the_firmware_does(twin: tuple[SimWorld, TwinArms]) -> None:
    _, arms = twin
    arm = arms.arm("left")
    started = time.monotonic()
    with pytest.raises(DriverError, match="no IK solution"):
        arm.move_to_pose(Pose((0.0, 1.5, 0.9), TOP_DOWN))
    assert time.monotonic() - started < 10.0
    arms.emulators["left"].inject_fault(0x00)  # clear it for any later test
