"""A Piper emulator whose joints are a SAPIEN arm's: the rig's CAN driver moves a simulated arm.

``TwinPiperEmulator`` speaks the same CAN frames as ``robot_drivers.piper_emulator.PiperEmulator`` (it reuses its
decoder and its feedback encoder), but the arm it reports is the simulated one:

- joint commands (0x155-0x157) move a firmware-like set-point towards the target at the commanded speed rate;
  the set-point is the SAPIEN joints' drive target, and feedback reports the simulated joint positions;
- end-pose commands (0x152-0x154) are solved to joints by the Piper's inverse kinematics
  (``robot_drivers.piper_ik``); a pose without a solution sets status 0x02 "no IK solution", as the firmware does;
- the gripper stroke (0x159) sets the finger targets; feedback reports the simulated finger gap. When closing
  fingers stall on an object touched by both fingers, the simulator's grasp holder takes it (as SimSkills do).

Physics advances only through ``TwinClock.sleep`` (``twin_clock``): commands are taken from the bus, the world is
stepped, feedback is sent, so a run does not depend on how fast the machine is. A keep-alive thread repeats the
last feedback on wall time, so the driver's link-freshness check holds while the agents think.
"""

from __future__ import annotations

import math
import threading

import can
import numpy as np

from mallvi.contracts.geometry import ArmSide
from mallvi.robot_drivers.piper.piper_emulator import PiperEmulator
from mallvi.robot_drivers.piper.piper_ik import piper_ik
from mallvi.robot_drivers.piper.piper_units import T_base_flange_from_sdk
from mallvi.sim_bridge.world import SimWorld

JOINT_SPEED_DEG_S = 180.0  # at a speed rate of 100 %
STATUS_NO_IK = 0x02
STALL_M = 2e-5  # the finger gap moved less than this over a step: the fingers stopped
STALL_STEPS = 10


class TwinPiperEmulator(PiperEmulator):
    """One Piper on ``channel`` whose arm is ``world.arms[side]``; start with ``start()``, stop with ``close()``."""

    def __init__(self, world: SimWorld, side: ArmSide, channel: str, keepalive_hz: float = 50.0) -> None:
        super().__init__(channel, interface="virtual", feedback_hz=keepalive_hz, joint_speed_deg_s=JOINT_SPEED_DEG_S)
        self.world = world
        self.side: ArmSide = side
        self._arm = world.arms[side]
        self._travel_m = world.embodiment.finger_travel_m
        self._setpoint_rad = self._arm.joint_positions_rad().copy()
        self._solved_pose: tuple[float, ...] | None = None
        self._closing = False
        self._still_steps = 0
        self._last_gap_m = self._arm.finger_gap_m()
        self._keepalive: threading.Thread | None = None
        self._read_sim()

    @property
    def gripper_full_stroke_m(self) -> float:
        """The finger gap at opening 1.0 (the driver's ``gripper_max_stroke_m``)."""
        return 2.0 * self._travel_m

    # ---- lifecycle -------------------------------------------------------------------------------------------
    def start(self) -> TwinPiperEmulator:
        self._bus = can.Bus(channel=self.channel, interface=self._interface)
        self._keepalive = threading.Thread(target=self._keep_alive, name=f"twin-piper-{self.channel}", daemon=True)
        self._keepalive.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._keepalive is not None:
            self._keepalive.join(timeout=2.0)
        with self._lock:
            if self._bus is not None:
                self._bus.shutdown()
                self._bus = None

    def _keep_alive(self) -> None:
        while not self._stop.wait(self._period_s):
            self._send_feedback()

    # ---- called by TwinClock ---------------------------------------------------------------------------------
    def take_commands(self) -> None:
        """Decode every frame the driver has sent so far."""
        bus = self._bus
        while bus is not None:
            try:
                msg = bus.recv(timeout=0.0)
            except can.CanOperationError:
                return
            if msg is None:
                return
            self._handle(msg)

    def before_step(self, dt_s: float) -> None:
        """Move the firmware's set-points by one physics step and hand them to the SAPIEN drives."""
        with self._lock:
            s = self.state
            if s.arm_status == 0x01 or not all(s.enabled):
                return
            if s.move_mode == 0x00 and all(v is not None for v in s.pose_target_sdk):
                self._solve_pose_target()
            if s.joint_target_mdeg is not None:
                target = np.radians(np.asarray(s.joint_target_mdeg, dtype=float) / 1000.0)
                max_step = math.radians(JOINT_SPEED_DEG_S) * max(s.speed_percent, 1) / 100.0 * dt_s
                self._setpoint_rad = self._setpoint_rad + np.clip(target - self._setpoint_rad, -max_step, max_step)
                self._arm.set_joint_targets(self._setpoint_rad)
            if s.gripper_target_um is not None and s.gripper_enabled:
                gap_m = s.gripper_target_um / 1e6
                holding = self.world.holder.held_by(self.side) is not None
                if gap_m < self._last_gap_m - 1e-3 and not self._closing and not holding:
                    self._closing, self._still_steps = True, 0
                elif gap_m > self._last_gap_m + 1e-3:
                    self._closing = False
                    self.world.holder.release(self.side)
                self._arm.set_gripper_target(gap_m / self.gripper_full_stroke_m)
                s.gripper_target_um = None

    def after_step(self) -> None:
        """Read the simulated joints and fingers back; take an object the closing fingers stopped on."""
        with self._lock:
            gap = self._arm.finger_gap_m()
            if self._closing:
                self._still_steps = self._still_steps + 1 if abs(gap - self._last_gap_m) < STALL_M else 0
                if self._still_steps >= STALL_STEPS:
                    self._closing = False
                    self.world.holder.try_hold(self.side)
            self._last_gap_m = gap
            self._read_sim()

    @property
    def bus_queue(self) -> object:
        """The receive queue of this emulator's own virtual bus (None when closed)."""
        return getattr(self._bus, "queue", None)

    def send_feedback(self) -> None:
        self._send_feedback()

    # ---- internals -------------------------------------------------------------------------------------------
    def _solve_pose_target(self) -> None:
        s = self.state
        target = tuple(float(v) for v in s.pose_target_sdk if v is not None)
        if target == self._solved_pose:
            return
        self._solved_pose = target
        q = piper_ik(T_base_flange_from_sdk([round(v) for v in target]), self._arm.joint_positions_rad())
        if q is None:
            s.arm_status = STATUS_NO_IK
            return
        s.joint_target_mdeg = [math.degrees(v) * 1000.0 for v in q]

    def _read_sim(self) -> None:
        s = self.state
        s.joints_mdeg = [math.degrees(v) * 1000.0 for v in self._arm.joint_positions_rad()]
        s.gripper_um = self._arm.finger_gap_m() * 1e6
        self._update_pose_from_joints()
