"""The device contracts: one arm with a parallel gripper, a calibrated RGB-D camera, two arms composed."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from types import TracebackType
from typing import Self

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.errors import DriverError
from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.contracts.observation import Observation


class Arm(ABC):
    """One arm with a parallel gripper. Positions in metres, angles in radians, gripper opening 0 (closed)..1."""

    side: ArmSide

    @abstractmethod
    def connect(self) -> None: ...

    @abstractmethod
    def disconnect(self) -> None: ...

    @property
    @abstractmethod
    def is_connected(self) -> bool: ...

    @abstractmethod
    def joint_positions_rad(self) -> NDArray[np.float64]: ...

    @abstractmethod
    def ee_pose(self) -> Pose:
        """The end-effector pose in the world frame (0.12 m behind the grasp centre, x = approach)."""

    @abstractmethod
    def follow_joint_path(self, path_rad: NDArray[np.float64], dt_s: float) -> None:
        """Track a joint-space path (N×dof) sampled every ``dt_s`` seconds. Raises DriverError on a fault."""

    @abstractmethod
    def set_gripper(self, opening: float) -> None:
        """Command the gripper opening, 0 = closed, 1 = fully open."""

    @abstractmethod
    def gripper_opening(self) -> float: ...

    @abstractmethod
    def stop(self) -> None:
        """Stop moving now and hold position (emergency stop on real hardware)."""

    def __enter__(self) -> Self:
        self.connect()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.disconnect()


class Camera(ABC):
    """A calibrated RGB-D camera."""

    name: str

    @abstractmethod
    def read(self) -> Observation:
        """The newest frame; raises StaleFrameError if none arrives in time."""


@dataclass
class DualArm:
    """Two single-arm drivers composed; adds routing by side and a stop for both, nothing else."""

    left: Arm
    right: Arm

    def arm(self, side: ArmSide) -> Arm:
        return self.left if side == "left" else self.right

    def stop_all(self) -> None:
        errors: list[str] = []
        for a in (self.left, self.right):
            try:
                a.stop()
            except DriverError as e:  # stop the other arm even if one fails
                errors.append(f"{a.side}: {e}")
        if errors:
            raise DriverError("stop failed on " + "; ".join(errors))
