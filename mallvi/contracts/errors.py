"""The typed errors every layer may raise or catch: device faults, stale frames, unknown object names."""

from __future__ import annotations


class DriverError(RuntimeError):
    """A device failed or answered with something the driver cannot use."""


class DeviceNotConnectedError(DriverError):
    """A command was sent to a device that is not connected."""


class StaleFrameError(DriverError):
    """A camera frame is missing or older than allowed."""


class UnknownObjectError(KeyError):
    """An object name that the world model does not know."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else "unknown object"
