"""A wire-level Piper emulator on a python-can bus, for tests and hardware-free rehearsals.

It sits on the far end of a CAN channel (python-can's ``virtual`` interface in tests), decodes the frames that
piper_sdk sends (enable 0x471, emergency stop 0x150, mode 0x151, end pose 0x152-0x154, joints 0x155-0x157,
gripper 0x159) and answers with the feedback frames the SDK's reader thread decodes (status 0x2A1, end pose
0x2A2-0x2A4, joints 0x2A5-0x2A7, gripper 0x2A8, driver low-speed info 0x261-0x266). Byte layouts follow
piper_sdk's protocol_v2 parser (big-endian, signed 32-bit positions). Joint motion is a rate-limited tracker;
in end-pose mode the reported pose tracks the target directly (no inverse kinematics).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass, field

import can
import numpy as np

log = logging.getLogger(__name__)

ID_ESTOP = 0x150
ID_MODE = 0x151
ID_POSE = (0x152, 0x153, 0x154)
ID_JOINT = (0x155, 0x156, 0x157)
ID_GRIPPER = 0x159
ID_ENABLE = 0x471
FB_STATUS = 0x2A1
FB_POSE = (0x2A2, 0x2A3, 0x2A4)
FB_JOINT = (0x2A5, 0x2A6, 0x2A7)
FB_GRIPPER = 0x2A8
FB_LOW_SPD = (0x261, 0x262, 0x263, 0x264, 0x265, 0x266)
COMMAND_IDS = frozenset({ID_ESTOP, ID_MODE, *ID_POSE, *ID_JOINT, ID_GRIPPER, ID_ENABLE})


def _i32(data: bytes | bytearray, start: int) -> int:
    return int.from_bytes(data[start:start + 4], "big", signed=True)


def _be(value: int, n: int, signed: bool = True) -> bytes:
    return int(value).to_bytes(n, "big", signed=signed)


@dataclass
class EmulatorState:
    """What the emulated arm is doing; SDK units (0.001°, 0.001 mm)."""

    enabled: list[bool] = field(default_factory=lambda: [False] * 6)
    joints_mdeg: list[float] = field(default_factory=lambda: [0.0] * 6)
    joint_target_mdeg: list[float] | None = None
    pose_sdk: list[float] = field(default_factory=lambda: [0.0] * 6)
    pose_target_sdk: list[float | None] = field(default_factory=lambda: [None] * 6)
    ctrl_mode: int = 0
    move_mode: int = 0x01
    speed_percent: int = 0
    arm_status: int = 0
    gripper_um: float = 50_000.0
    gripper_target_um: float | None = None
    gripper_enabled: bool = False


class PiperEmulator:
    """Emulates one Piper on ``channel``. Use as a context manager or call start()/close().

    Args:
        channel: the CAN channel name the driver uses.
        interface: python-can interface ("virtual" in tests).
        feedback_hz: rate of the high-rate feedback frames (status, pose, joints, gripper).
        joint_speed_deg_s: joint speed at a speed rate of 100 %.
        linear_speed_m_s: end-pose tracking speed at 100 %.
        object_width_m: when set, a closing gripper stalls at this stroke (an object between the fingers).
    """

    def __init__(self, channel: str, interface: str = "virtual", feedback_hz: float = 50.0,
                 joint_speed_deg_s: float = 180.0, linear_speed_m_s: float = 0.5,
                 object_width_m: float | None = None) -> None:
        self.channel = channel
        self.state = EmulatorState()
        self.received: list[tuple[float, int, bytes]] = []
        self.object_width_m = object_width_m
        self._interface = interface
        self._period_s = 1.0 / feedback_hz
        self._joint_speed_mdeg_s = joint_speed_deg_s * 1000.0
        self._linear_speed_um_s = linear_speed_m_s * 1e6
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._bus: can.BusABC | None = None
        self._thread: threading.Thread | None = None
        self._tick = 0
        from piper_sdk.kinematics.piper_fk import C_PiperForwardKinematics

        self._fk = C_PiperForwardKinematics(0x01)
        self._update_pose_from_joints()

    # ---- lifecycle -------------------------------------------------------------------------------------------
    def start(self) -> PiperEmulator:
        self._bus = can.Bus(channel=self.channel, interface=self._interface)
        self._thread = threading.Thread(target=self._run, name=f"piper-emulator-{self.channel}", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        if self._bus is not None:
            self._bus.shutdown()
            self._bus = None

    def __enter__(self) -> PiperEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- inspection and fault injection -----------------------------------------------------------------------
    def frames_with_id(self, can_id: int) -> list[bytes]:
        with self._lock:
            return [d for _, i, d in self.received if i == can_id]

    def wait_for_frames(self, can_id: int, timeout_s: float = 1.0) -> list[bytes]:
        """The frames received with ``can_id``, waiting up to ``timeout_s`` for the first one."""
        deadline = time.monotonic() + timeout_s
        while not (frames := self.frames_with_id(can_id)) and time.monotonic() < deadline:
            time.sleep(0.005)
        return frames

    def command_count(self) -> int:
        """How many motion/config command frames (not the SDK's start-up queries) reached this arm."""
        with self._lock:
            return sum(1 for _, i, _ in self.received if i in COMMAND_IDS)

    def inject_fault(self, arm_status: int) -> None:
        """Report ``arm_status`` (e.g. 0x07 collision) from the next status frame on."""
        with self._lock:
            self.state.arm_status = arm_status

    def set_joints_deg(self, joints_deg: list[float]) -> None:
        with self._lock:
            self.state.joints_mdeg = [v * 1000.0 for v in joints_deg]
            self.state.joint_target_mdeg = None
            self._update_pose_from_joints()

    # ---- main loop -------------------------------------------------------------------------------------------
    def _run(self) -> None:
        assert self._bus is not None
        next_tick = time.monotonic()
        last = next_tick
        while not self._stop.is_set():
            timeout = max(0.0, next_tick - time.monotonic())
            try:
                msg = self._bus.recv(timeout=timeout)
            except can.CanOperationError:
                return
            if msg is not None:
                self._handle(msg)
            now = time.monotonic()
            if now >= next_tick:
                with self._lock:
                    self._step(now - last)
                last = now
                next_tick = now + self._period_s
                self._send_feedback()

    def _handle(self, msg: can.Message) -> None:
        cid, d = msg.arbitration_id, bytes(msg.data)
        with self._lock:
            self.received.append((time.time(), cid, d))
            s = self.state
            if cid == ID_ENABLE:
                motor, flag = d[0], d[1]
                targets = range(6) if motor in (7, 0xFF) else [motor - 1] if 1 <= motor <= 6 else []
                for j in targets:
                    s.enabled[j] = flag == 0x02
                if flag == 0x02 and s.joint_target_mdeg is None:
                    s.joint_target_mdeg = list(s.joints_mdeg)
            elif cid == ID_ESTOP:
                if d[0] == 0x01:
                    s.arm_status = 0x01
                    s.joint_target_mdeg = None
                    s.pose_target_sdk = [None] * 6
                    s.gripper_target_um = None
                elif d[0] == 0x02:  # "resume": the real firmware cuts power and clears errors
                    s.arm_status = 0x00
                    s.enabled = [False] * 6
            elif cid == ID_MODE:
                s.ctrl_mode, s.move_mode, s.speed_percent = d[0], d[1], d[2]
            elif cid in ID_JOINT and s.arm_status != 0x01:
                k = ID_JOINT.index(cid)
                if s.joint_target_mdeg is None:
                    s.joint_target_mdeg = list(s.joints_mdeg)
                s.joint_target_mdeg[2 * k] = _i32(d, 0)
                s.joint_target_mdeg[2 * k + 1] = _i32(d, 4)
            elif cid in ID_POSE and s.arm_status != 0x01:
                k = ID_POSE.index(cid)
                s.pose_target_sdk[2 * k] = _i32(d, 0)
                s.pose_target_sdk[2 * k + 1] = _i32(d, 4)
            elif cid == ID_GRIPPER:
                s.gripper_enabled = d[6] in (0x01, 0x03)
                if s.arm_status != 0x01 and s.gripper_enabled:
                    s.gripper_target_um = _i32(d, 0)

    def _step(self, dt_s: float) -> None:
        s = self.state
        if s.arm_status == 0x01 or not all(s.enabled):
            return
        rate = max(s.speed_percent, 1) / 100.0
        if s.move_mode == 0x00 and all(v is not None for v in s.pose_target_sdk):
            target = np.array(s.pose_target_sdk, dtype=float)
            cur = np.array(s.pose_sdk, dtype=float)
            delta = target - cur
            dist_um = float(np.linalg.norm(delta[:3]))
            max_um = self._linear_speed_um_s * rate * dt_s
            frac = 1.0 if dist_um <= max_um else max_um / dist_um
            s.pose_sdk = list(cur + delta * frac)
        elif s.joint_target_mdeg is not None:
            max_step = self._joint_speed_mdeg_s * rate * dt_s
            s.joints_mdeg = [c + float(np.clip(t - c, -max_step, max_step))
                             for c, t in zip(s.joints_mdeg, s.joint_target_mdeg, strict=True)]
            self._update_pose_from_joints()
        if s.gripper_target_um is not None and s.gripper_enabled:
            floor = self.object_width_m * 1e6 if self.object_width_m is not None else 0.0
            goal = max(s.gripper_target_um, floor) if s.gripper_target_um < s.gripper_um else s.gripper_target_um
            step = 100_000.0 * dt_s  # 0.1 m/s finger speed
            s.gripper_um += float(np.clip(goal - s.gripper_um, -step, step))

    def _update_pose_from_joints(self) -> None:
        q_rad = [math.radians(v / 1000.0) for v in self.state.joints_mdeg]
        x, y, z, rx, ry, rz = self._fk.CalFK(q_rad)[5]
        self.state.pose_sdk = [x * 1000.0, y * 1000.0, z * 1000.0, rx * 1000.0, ry * 1000.0, rz * 1000.0]

    def _send_feedback(self) -> None:
        with self._lock:
            s = self.state
            moving = s.joint_target_mdeg is not None and any(
                abs(t - c) > 10 for c, t in zip(s.joints_mdeg, s.joint_target_mdeg, strict=True))
            frames = [(FB_STATUS, bytes([s.ctrl_mode, s.arm_status, s.move_mode, 0, int(moving), 0, 0, 0]))]
            p = [round(v) for v in s.pose_sdk]
            for k, cid in enumerate(FB_POSE):
                frames.append((cid, _be(p[2 * k], 4) + _be(p[2 * k + 1], 4)))
            j = [round(v) for v in s.joints_mdeg]
            for k, cid in enumerate(FB_JOINT):
                frames.append((cid, _be(j[2 * k], 4) + _be(j[2 * k + 1], 4)))
            g_status = 0x40 if s.gripper_enabled else 0x00
            frames.append((FB_GRIPPER, _be(round(s.gripper_um), 4) + _be(0, 2) + bytes([g_status, 0])))
            self._tick += 1
            if self._tick % 5 == 1:
                for k, cid in enumerate(FB_LOW_SPD):
                    foc = 0x40 if s.enabled[k] else 0x00
                    frames.append((cid, _be(240, 2, False) + _be(30, 2) + _be(30, 1) + bytes([foc]) + _be(0, 2, False)))
        bus = self._bus
        if bus is None:
            return
        for cid, data in frames:
            try:
                bus.send(can.Message(arbitration_id=cid, data=data, is_extended_id=False))
            except can.CanOperationError:
                return
