"""The Piper driver against a wire-level emulated Piper on python-can's virtual bus."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from mallvi.contracts.errors import DeviceNotConnectedError, DriverError
from mallvi.contracts.geometry import Pose
from mallvi.robot_drivers.piper.config_piper import PiperConfig
from mallvi.robot_drivers.piper.piper import PiperArm
from mallvi.robot_drivers.piper.piper_emulator import PiperEmulator
from mallvi.robot_drivers.piper.piper_units import T_flange_ee

BASE = Pose.from_arrays([-0.3, -0.3, 0.95], Rotation.from_euler("z", 90, degrees=True).as_quat()[[3, 0, 1, 2]])


def _i32(data: bytes, start: int) -> int:
    return int.from_bytes(data[start:start + 4], "big", signed=True)


@pytest.fixture
def rig() -> Iterator[tuple[PiperArm, PiperEmulator]]:
    channel = f"test_piper_{uuid.uuid4().hex[:8]}"  # piper_sdk keeps one interface per channel name
    with PiperEmulator(channel, object_width_m=None) as emu:
        arm = PiperArm(PiperConfig(side="left", can_name=channel, bus_type="virtual", base_pose_world=BASE,
                                   speed_percent=100, motion_timeout_s=10.0,
                                   feedback_timeout_s=5.0))
        arm.connect()
        arm.enable()
        yield arm, emu
        arm.disconnect()


def test_enable_reaches_the_arm_and_all_drivers_report_enabled(rig: tuple[PiperArm, PiperEmulator]) -> None:
    arm, emu = rig
    enable_frames = emu.frames_with_id(0x471)
    assert enable_frames and enable_frames[0][0] == 7 and enable_frames[0][1] == 0x02
    assert all(emu.state.enabled)
    assert all(arm._require().GetArmEnableStatus())


def test_joint_move_sends_sdk_units_and_feedback_converges(rig: tuple[PiperArm, PiperEmulator]) -> None:
    arm, emu = rig
    q = np.array([0.2, 0.8, -0.8, 0.1, 0.3, -0.2])
    arm.move_joints(q)
    f12, f34, f56 = emu.frames_with_id(0x155)[-1], emu.frames_with_id(0x156)[-1], emu.frames_with_id(0x157)[-1]
    sent_mdeg = [_i32(f12, 0), _i32(f12, 4), _i32(f34, 0), _i32(f34, 4), _i32(f56, 0), _i32(f56, 4)]
    assert sent_mdeg == [round(math.degrees(v) * 1000) for v in q]
    assert np.max(np.abs(arm.joint_positions_rad() - q)) < math.radians(1.0)
    # The world-frame EE pose is the mount times the SDK's own forward kinematics times the tool frame.
    from piper_sdk.kinematics.piper_fk import C_PiperForwardKinematics

    x, y, z, rx, ry, rz = C_PiperForwardKinematics(0x01).CalFK(list(arm.joint_positions_rad()))[5]
    T_base_flange = np.eye(4)
    T_base_flange[:3, :3] = Rotation.from_euler("xyz", [rx, ry, rz], degrees=True).as_matrix()
    T_base_flange[:3, 3] = np.array([x, y, z]) / 1000.0
    expected = BASE.as_matrix() @ T_base_flange @ T_flange_ee(arm.config.flange_to_ee_m)
    assert np.allclose(arm.ee_pose().as_matrix(), expected, atol=2e-4)


def test_end_pose_move_in_world_frame(rig: tuple[PiperArm, PiperEmulator]) -> None:
    arm, emu = rig
    arm.move_joints([0.0, 0.9, -0.9, 0.0, 0.4, 0.0])
    start = arm.ee_pose()
    goal = Pose.from_arrays(start.p + np.array([0.03, 0.02, -0.05]), start.q)
    arm.move_to_pose(goal)
    assert np.linalg.norm(arm.ee_pose().p - goal.p) < 0.003
    xy, zrx = emu.frames_with_id(0x152)[-1], emu.frames_with_id(0x153)[-1]
    T_base_flange = np.linalg.inv(BASE.as_matrix()) @ goal.as_matrix() @ np.linalg.inv(T_flange_ee(0.01))
    sent_um = np.array([_i32(xy, 0), _i32(xy, 4), _i32(zrx, 0)])
    assert np.allclose(sent_um, T_base_flange[:3, 3] * 1e6, atol=1.0)


def test_gripper_command_and_feedback(rig: tuple[PiperArm, PiperEmulator]) -> None:
    arm, emu = rig
    arm.set_gripper(0.5)
    frame = emu.frames_with_id(0x159)[-1]
    assert _i32(frame, 0) == 35_000  # half of the 70 mm stroke, in 0.001 mm
    assert arm.gripper_opening() == pytest.approx(0.5, abs=0.02)
    emu.object_width_m = 0.021  # an object 21 mm wide: the fingers stall on it
    arm.set_gripper(0.0)
    assert arm.gripper_opening() == pytest.approx(0.3, abs=0.02)


def test_emergency_stop_reaches_the_bus_and_blocks_further_motion(rig: tuple[PiperArm, PiperEmulator]) -> None:
    arm, emu = rig
    arm.stop()
    frames = emu.wait_for_frames(0x150)
    assert frames and frames[-1][0] == 0x01
    n_joint_frames = len(emu.frames_with_id(0x155))
    with pytest.raises(DriverError, match="emergency-stopped"):
        arm.move_joints([0.1, 0.5, -0.5, 0.0, 0.0, 0.0])
    assert len(emu.frames_with_id(0x155)) == n_joint_frames


def test_firmware_fault_is_reported(rig: tuple[PiperArm, PiperEmulator]) -> None:
    arm, emu = rig
    emu.inject_fault(0x07)
    import time

    time.sleep(0.1)
    with pytest.raises(DriverError, match="collision"):
        arm.move_joints([0.1, 0.5, -0.5, 0.0, 0.0, 0.0])


def test_no_arm_on_the_channel_is_a_clear_error() -> None:
    arm = PiperArm(PiperConfig(side="right", can_name=f"nobody_{uuid.uuid4().hex[:8]}", bus_type="virtual",
                               feedback_timeout_s=0.2))
    with pytest.raises(DeviceNotConnectedError, match="no feedback"):
        arm.connect()
    assert not arm.is_connected
    with pytest.raises(DeviceNotConnectedError, match="not connected"):
        arm.joint_positions_rad()


def test_bad_paths_are_refused_before_anything_is_sent(rig: tuple[PiperArm, PiperEmulator]) -> None:
    arm, emu = rig
    before = emu.command_count()
    with pytest.raises(ValueError, match="NaN"):
        arm.follow_joint_path(np.array([[0.0, 0.5, -0.5, 0.0, float("nan"), 0.0]]), 0.01)
    with pytest.raises(ValueError, match="joint 2"):
        arm.follow_joint_path(np.array([[0.0, -0.5, -0.5, 0.0, 0.0, 0.0]]), 0.01)
    assert emu.command_count() == before
