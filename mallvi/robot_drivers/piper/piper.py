"""AgileX Piper arm driver: piper_sdk (C_PiperInterface_V2) over python-can, behind mallvi's Arm contract.

Every value crossing the SDK boundary goes through the named conversions in ``piper_units``; poses given to and
returned by this driver are in the WORLD frame, mapped through the configured mount ``base_pose_world``.
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.devices import Arm
from mallvi.contracts.errors import DeviceNotConnectedError, DriverError
from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.robot_drivers.driver_clock import REAL_CLOCK, DriverClock
from mallvi.robot_drivers.piper.config_piper import PIPER_JOINT_LIMITS_RAD, PiperConfig
from mallvi.robot_drivers.piper.piper_units import (
    T_base_flange_from_sdk,
    T_base_flange_to_sdk,
    T_flange_ee,
    gripper_opening_from_sdk_um,
    gripper_opening_to_sdk_um,
    joints_from_sdk,
    joints_to_sdk,
)

log = logging.getLogger(__name__)

# Codes of the status frame 0x2A1, byte 1 (piper_sdk GetArmStatus docstring).
ARM_STATUS_NAMES: dict[int, str] = {
    0x00: "normal",
    0x01: "emergency stop",
    0x02: "no IK solution",
    0x03: "singularity",
    0x04: "target angle over the joint limit",
    0x05: "joint communication error",
    0x06: "joint brake not released",
    0x07: "collision detected",
    0x08: "overspeed while teaching",
    0x09: "joint state abnormal",
    0x0A: "other fault",
    0x0B: "teach recording",
    0x0C: "teach replay",
    0x0D: "teach paused",
    0x0E: "controller over-temperature",
    0x0F: "brake resistor over-temperature",
}
FAULT_STATUS_CODES = frozenset({0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0E, 0x0F})

CTRL_MODE_CAN = 0x01
MOVE_P = 0x00
MOVE_J = 0x01
ESTOP_STOP = 0x01
ESTOP_RESUME = 0x02
GRIPPER_ENABLE = 0x01
ALL_MOTORS = 7
POLL_S = 0.01


@dataclass(frozen=True)
class PiperStatus:
    """The arm's last status frame (0x2A1)."""

    ctrl_mode: int
    arm_status: int
    motion_status: int
    err_code: int
    stamp: float

    @property
    def name(self) -> str:
        return ARM_STATUS_NAMES.get(self.arm_status, f"unknown status 0x{self.arm_status:02X}")

    @property
    def is_fault(self) -> bool:
        return self.arm_status in FAULT_STATUS_CODES


def _default_sdk_factory(config: PiperConfig) -> Any:
    from piper_sdk import C_PiperInterface_V2

    return C_PiperInterface_V2(config.can_name, judge_flag=False, can_auto_init=False)


class PiperArm(Arm):
    """One Piper arm. Lifecycle: connect() -> enable() -> motions -> disable() -> disconnect().

    Args:
        config: the arm's configuration.
        sdk_factory: builds the piper_sdk interface (injected in tests of error paths; the default is the SDK).
        clock: what motion deadlines and waits run on (real time; the twin's simulated time).
    """

    def __init__(self, config: PiperConfig, sdk_factory: Callable[[PiperConfig], Any] = _default_sdk_factory,
                 clock: DriverClock = REAL_CLOCK):
        self.config = config
        self._clock = clock
        self.side: ArmSide = config.side
        self._sdk_factory = sdk_factory
        self._sdk: Any = None
        self._stopped = False
        self._T_world_base = config.base_pose_world.as_matrix()
        self._T_base_world = np.linalg.inv(self._T_world_base)
        self._T_flange_ee = T_flange_ee(config.flange_to_ee_m)
        self._T_ee_flange = np.linalg.inv(self._T_flange_ee)

    @property
    def base_pose_world(self) -> Pose:
        """The arm's mount: its base frame in the world (T_world_base)."""
        return self.config.base_pose_world

    # ---- lifecycle -------------------------------------------------------------------------------------------
    def connect(self) -> None:
        """Open the CAN channel, start the SDK's reader thread and wait for the arm's first feedback."""
        if self._sdk is not None:
            return
        cfg = self.config
        try:
            sdk = self._sdk_factory(cfg)
            with warnings.catch_warnings():  # piper_sdk still passes python-can's deprecated 'bustype'
                warnings.simplefilter("ignore", DeprecationWarning)
                sdk.CreateCanBus(cfg.can_name, bustype=cfg.bus_type, expected_bitrate=1_000_000,
                                 judge_flag=cfg.check_can_port and cfg.bus_type == "socketcan")
            sdk.ConnectPort(piper_init=True, start_thread=True)
        except (ConnectionError, OSError, ValueError) as e:
            raise DeviceNotConnectedError(
                f"{self.side} Piper: cannot open CAN channel {cfg.can_name!r} ({cfg.bus_type}): {e}. "
                "Is the USB-CAN adapter plugged in and the port up at 1 Mbit/s (docs/real_rig.md, 'CAN set-up')?"
            ) from e
        self._sdk = sdk
        self._stopped = False
        deadline = self._clock.monotonic() + cfg.feedback_timeout_s
        while self._clock.monotonic() < deadline:
            if self._feedback_age_s() < cfg.feedback_timeout_s:
                log.info("%s Piper connected on %s", self.side, cfg.can_name)
                return
            self._clock.sleep(POLL_S)
        self.disconnect()
        raise DeviceNotConnectedError(
            f"{self.side} Piper: no feedback on CAN channel {cfg.can_name!r} within {cfg.feedback_timeout_s} s. "
            "Is the arm powered on and the right channel configured?"
        )

    def disconnect(self) -> None:
        if self._sdk is None:
            return
        try:
            self._sdk.DisconnectPort()
        finally:
            self._sdk = None

    @property
    def is_connected(self) -> bool:
        return self._sdk is not None

    def enable(self) -> None:
        """Enable all six joint drivers and the gripper; raises DriverError if they do not all report enabled."""
        sdk = self._require()
        deadline = self._clock.monotonic() + self.config.enable_timeout_s
        while self._clock.monotonic() < deadline:
            sdk.EnableArm(ALL_MOTORS)
            # Enable the gripper where it is (a stroke of 0 would close it).
            stroke_um = int(sdk.GetArmGripperMsgs().gripper_state.grippers_angle)
            sdk.GripperCtrl(max(stroke_um, 0), 0, GRIPPER_ENABLE, 0)
            self._clock.sleep(0.05)
            if all(sdk.GetArmEnableStatus()):
                log.info("%s Piper enabled", self.side)
                return
        raise DriverError(f"{self.side} Piper: the joint drivers did not report 'enabled' within "
                          f"{self.config.enable_timeout_s} s (enable flags {sdk.GetArmEnableStatus()})")

    def disable(self) -> None:
        """Disable the joint drivers. The arm goes limp: support it first."""
        self._require().DisableArm(ALL_MOTORS)

    # ---- feedback --------------------------------------------------------------------------------------------
    def status(self) -> PiperStatus:
        s = self._require().GetArmStatus()
        a = s.arm_status
        return PiperStatus(int(a.ctrl_mode), int(a.arm_status), int(a.motion_status), int(a.err_code),
                           float(s.time_stamp))

    def joint_positions_rad(self) -> NDArray[np.float64]:
        sdk = self._require()
        self._check_fresh()
        js = sdk.GetArmJointMsgs().joint_state
        return joints_from_sdk([js.joint_1, js.joint_2, js.joint_3, js.joint_4, js.joint_5, js.joint_6])

    def flange_pose_base(self) -> NDArray[np.float64]:
        """The flange pose in the arm's base frame (4×4), as the firmware reports it."""
        sdk = self._require()
        self._check_fresh()
        ep = sdk.GetArmEndPoseMsgs().end_pose
        return T_base_flange_from_sdk([ep.X_axis, ep.Y_axis, ep.Z_axis, ep.RX_axis, ep.RY_axis, ep.RZ_axis])

    def ee_pose(self) -> Pose:
        return Pose.from_matrix(self._T_world_base @ self.flange_pose_base() @ self._T_flange_ee)

    def gripper_opening(self) -> float:
        sdk = self._require()
        self._check_fresh()
        stroke_um = int(sdk.GetArmGripperMsgs().gripper_state.grippers_angle)
        return gripper_opening_from_sdk_um(stroke_um, self.config.gripper_max_stroke_m)

    # ---- commands --------------------------------------------------------------------------------------------
    def follow_joint_path(self, path_rad: NDArray[np.float64], dt_s: float) -> None:
        path = np.asarray(path_rad, dtype=float)
        if path.ndim != 2 or path.shape[1] != 6 or len(path) == 0:
            raise ValueError(f"a Piper joint path must be N×6, got shape {path.shape}")
        if not np.all(np.isfinite(path)):
            raise ValueError("the joint path contains NaN or inf")
        if not (math.isfinite(dt_s) and dt_s > 0):
            raise ValueError(f"dt_s must be positive, got {dt_s!r}")
        for j, (lo, hi) in enumerate(PIPER_JOINT_LIMITS_RAD):
            if path[:, j].min() < lo - 1e-6 or path[:, j].max() > hi + 1e-6:
                raise ValueError(f"joint {j + 1} leaves the Piper's limits [{lo}, {hi}] rad on this path")
        sdk = self._require_movable()
        next_tick = self._clock.monotonic()
        for q in path:
            sdk.ModeCtrl(CTRL_MODE_CAN, MOVE_J, self.config.speed_percent, 0x00)
            sdk.JointCtrl(*joints_to_sdk(q))
            self._raise_on_fault()
            next_tick += dt_s
            self._clock.sleep(max(0.0, next_tick - self._clock.monotonic()))
        target = path[-1]
        self._wait_until(lambda: float(np.max(np.abs(self.joint_positions_rad() - target)))
                         <= self.config.joint_tolerance_rad, "the last joint target")

    def move_joints(self, q_rad: Sequence[float] | NDArray[np.float64]) -> None:
        """Move to one joint configuration and wait until it is reached."""
        self.follow_joint_path(np.asarray([q_rad], dtype=float), dt_s=POLL_S)

    def home(self) -> None:
        self.move_joints(self.config.home_joints_rad)

    def follow_ee_path(self, poses_world: Sequence[Pose], dt_s: float) -> None:
        """Stream end-effector targets (world frame) every ``dt_s`` s and wait until the last is reached."""
        if not poses_world:
            raise ValueError("an end-effector path needs at least one pose")
        if not (math.isfinite(dt_s) and dt_s > 0):
            raise ValueError(f"dt_s must be positive, got {dt_s!r}")
        commands = [T_base_flange_to_sdk(self._T_base_world @ p.as_matrix() @ self._T_ee_flange) for p in poses_world]
        sdk = self._require_movable()
        next_tick = self._clock.monotonic()
        for cmd in commands:
            sdk.ModeCtrl(CTRL_MODE_CAN, MOVE_P, self.config.speed_percent, 0x00)
            sdk.EndPoseCtrl(*cmd)
            self._raise_on_fault()
            next_tick += dt_s
            self._clock.sleep(max(0.0, next_tick - self._clock.monotonic()))
        goal = poses_world[-1]
        self._wait_until(lambda: _reached(self.ee_pose(), goal, self.config.position_tolerance_m,
                                          self.config.orientation_tolerance_rad), "the end-effector target")

    def move_to_pose(self, pose_world: Pose) -> None:
        """Move the end effector to one world-frame pose (the firmware interpolates) and wait."""
        self.follow_ee_path([pose_world], dt_s=POLL_S)

    def set_gripper(self, opening: float) -> None:
        if not math.isfinite(opening):
            raise ValueError(f"gripper opening {opening!r} is not finite")
        target = min(max(opening, 0.0), 1.0)
        sdk = self._require_movable()
        effort = round(self.config.gripper_effort_nm * 1000)
        sdk.GripperCtrl(gripper_opening_to_sdk_um(target, self.config.gripper_max_stroke_m), effort, GRIPPER_ENABLE, 0)
        # Wait until the fingers reach the target or stop moving (they stop early on an object).
        last = self.gripper_opening()
        still_since = self._clock.monotonic()
        deadline = self._clock.monotonic() + min(self.config.motion_timeout_s, 5.0)
        while self._clock.monotonic() < deadline:
            self._clock.sleep(0.02)
            now = self.gripper_opening()
            if abs(now - target) < 0.02:
                return
            if abs(now - last) > 1e-3:
                still_since, last = self._clock.monotonic(), now
            elif self._clock.monotonic() - still_since > 0.3:
                return
        raise DriverError(f"{self.side} Piper: the gripper did not settle within the timeout")

    def stop(self) -> None:
        """Emergency stop (0x150, 0x01): the firmware halts the motion. Further moves are refused until reset."""
        sdk = self._require()
        sdk.EmergencyStop(ESTOP_STOP)
        self._stopped = True
        log.warning("%s Piper: emergency stop sent", self.side)

    def reset_after_stop(self) -> None:
        """Clear an emergency stop (0x150, 0x02). The firmware cuts joint power: SUPPORT THE ARM FIRST."""
        self._require().EmergencyStop(ESTOP_RESUME)
        self._stopped = False

    @property
    def is_stopped(self) -> bool:
        return self._stopped

    # ---- helpers ---------------------------------------------------------------------------------------------
    def _require(self) -> Any:
        if self._sdk is None:
            raise DeviceNotConnectedError(f"{self.side} Piper is not connected; call connect() first")
        return self._sdk

    def _require_movable(self) -> Any:
        sdk = self._require()
        if self._stopped:
            raise DriverError(f"{self.side} Piper is emergency-stopped; reset_after_stop() and enable() first")
        self._raise_on_fault()
        return sdk

    def _feedback_age_s(self) -> float:
        stamp = float(self._require().GetArmJointMsgs().time_stamp)
        return math.inf if stamp <= 0 else time.time() - stamp

    def _check_fresh(self) -> None:
        age = self._feedback_age_s()
        if age > self.config.feedback_timeout_s:
            raise DriverError(f"{self.side} Piper: feedback is {age:.2f} s old (limit "
                              f"{self.config.feedback_timeout_s} s); the CAN link or the arm is down")

    def _raise_on_fault(self) -> None:
        st = self.status()
        if st.stamp > 0 and st.is_fault:
            raise DriverError(f"{self.side} Piper reports '{st.name}' (status 0x{st.arm_status:02X}, "
                              f"error code 0x{st.err_code:04X})")

    def _wait_until(self, reached: Callable[[], bool], what: str) -> None:
        deadline = self._clock.monotonic() + self.config.motion_timeout_s
        while self._clock.monotonic() < deadline:
            if reached():
                return
            self._raise_on_fault()
            self._clock.sleep(POLL_S)
        raise DriverError(f"{self.side} Piper did not reach {what} within {self.config.motion_timeout_s} s")


def _reached(now: Pose, goal: Pose, tol_m: float, tol_rad: float) -> bool:
    """Whether ``now`` is within ``tol_m`` of ``goal``'s position and ``tol_rad`` of its orientation (a
    rotation-only move is done when the wrist has turned, not when the position, unchanged, matches)."""
    turn_rad = 2.0 * math.acos(min(1.0, abs(float(np.dot(now.q, goal.q)))))
    return float(np.linalg.norm(now.p - goal.p)) <= tol_m and turn_rad <= tol_rad
