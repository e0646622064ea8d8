"""Simulated time for the twin's drivers: waiting on this clock advances the SAPIEN physics.

``TwinClock.sleep(s)`` takes the commands the drivers have put on the CAN bus, steps the world by ``s`` seconds
(whole physics steps; the remainder carries over), sends fresh feedback and waits until the drivers' CAN readers
have taken it. ``monotonic()`` is simulated seconds. Motion, gripper waits and time-outs therefore run on
simulated time, and a run gives the same motion on a fast or a slow machine.
"""

from __future__ import annotations

import threading
import time

from can.interfaces import virtual

from mallvi.sim_bridge import layout
from mallvi.sim_bridge.world import SimWorld
from mallvi.twin.emulated_arm import TwinPiperEmulator

DELIVERY_WAIT_S = 0.2  # at most this much wall time for the drivers' readers to take the feedback
UNREAD_QUEUE_LEN = 256  # a queue this long has no reader (piper_sdk opens one bus it never reads)
_PARSE_S = 0.0005


class TwinClock:
    """The ``DriverClock`` of a twin: simulated seconds of ``world``, advanced by the drivers' waits."""

    def __init__(self, world: SimWorld) -> None:
        self.world = world
        self.emulators: list[TwinPiperEmulator] = []
        self._lock = threading.RLock()
        self._carry_s = 0.0
        self._start_s = world.sim_time_s

    def attach(self, emulator: TwinPiperEmulator) -> None:
        self.emulators.append(emulator)

    def monotonic(self) -> float:
        return self.world.sim_time_s - self._start_s + 1.0

    def sleep(self, seconds: float) -> None:
        with self._lock:
            for emu in self.emulators:
                emu.take_commands()
            self._carry_s += max(0.0, seconds)
            n = int(self._carry_s / layout.PHYSICS_DT_S + 1e-9)
            self._carry_s -= n * layout.PHYSICS_DT_S
            for _ in range(n):
                for emu in self.emulators:
                    emu.before_step(layout.PHYSICS_DT_S)
                self.world.step(1)
                for emu in self.emulators:
                    emu.after_step()
            for emu in self.emulators:
                emu.send_feedback()
            _wait_delivered([emu.channel for emu in self.emulators], {id(emu.bus_queue) for emu in self.emulators})


def _wait_delivered(channels: list[str], own_queues: set[int]) -> None:
    """Wait (wall time, bounded) until every reader on ``channels`` has taken its queued frames."""
    deadline = time.monotonic() + DELIVERY_WAIT_S
    while time.monotonic() < deadline:
        with virtual.channels_lock:
            pending = any(0 < q.qsize() < UNREAD_QUEUE_LEN for ch in channels for q in virtual.channels.get(ch, [])
                          if id(q) not in own_queues)
        if not pending:
            break
        time.sleep(0.0002)
    time.sleep(_PARSE_S)
