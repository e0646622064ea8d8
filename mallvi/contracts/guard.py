"""The safety guard's contract: the checks every motion passes before anything moves.

Each check returns None when the command is allowed, else a sentence saying why it is refused. The
implementation is ``mallvi.robot_drivers.safety.guard.MotionGuard`` (workspace box per arm, table plane, step and speed
limits, inter-arm clearance, point-cloud collisions, NaN/inf rejection); the simulator and the rig both use it.
Frames and units: world frame, metres, radians, seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.geometry import ArmSide, Pose


@runtime_checkable
class MotionGuard(Protocol):
    """Checks motion commands; a refusal is a reason, never an exception."""

    def check_values(self, what: str, values: Sequence[float] | NDArray[np.float64]) -> str | None:
        """Refuse NaN or infinite values in any command vector."""
        ...

    def check_pose(self, side: ArmSide, pose: Pose, current: Pose | None = None) -> str | None:
        """Check an end-effector target pose for ``side``, optionally as a step from its current pose."""
        ...

    def check_gripper(self, side: ArmSide, opening: float) -> str | None:
        """A gripper command must be a finite opening in 0 (closed) .. 1 (open)."""
        ...

    def check_joint_path(self, side: ArmSide, path_rad: NDArray[np.float64], dt_s: float) -> str | None:
        """Check an N×dof joint path sampled every ``dt_s`` seconds (limits, jumps, speed)."""
        ...

    def check_ee_path(self, side: ArmSide, poses: Sequence[Pose], dt_s: float, current: Pose | None = None
                      ) -> str | None:
        """Check an end-effector path sampled every ``dt_s`` seconds, pose by pose and step by step."""
        ...

    def check_clearance(self, side: ArmSide, pose: Pose, other_pose: Pose) -> str | None:
        """Keep ``side``'s gripper clear of the other arm's gripper."""
        ...
