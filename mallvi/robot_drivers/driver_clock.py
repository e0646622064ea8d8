"""The clock a device driver waits on: real time on a rig, simulated time in the twin.

A driver reads ``monotonic()`` for deadlines and calls ``sleep(s)`` to wait; it never calls ``time`` directly, so a
simulated device can advance its physics while the driver waits (``mallvi.twin.clock``). Freshness of
device feedback is a property of the link, not of the motion, and stays on wall time.
"""

from __future__ import annotations

import time
from typing import Protocol


class DriverClock(Protocol):
    """Seconds on a monotonic clock, and a way to wait on it."""

    def monotonic(self) -> float:
        """Seconds since an arbitrary start; never goes back."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (0 or less: yield once)."""
        ...


class RealClock:
    """Wall time: ``time.monotonic`` and ``time.sleep``."""

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))


REAL_CLOCK = RealClock()
