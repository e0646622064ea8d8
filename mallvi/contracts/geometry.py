"""Poses in the world frame and the arm tags.

Frames and units: world frame +x to the robot's right, +y away from the robot, +z up; metres, radians.
Quaternions are [w, x, y, z] everywhere in mallvi (the benchmark's action API convention).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

ArmSide = Literal["left", "right"]
ARM_SIDES: tuple[ArmSide, ArmSide] = ("left", "right")


def parse_arm(value: str) -> ArmSide:
    """Validate an arm tag ("left"/"right"); raises ValueError with a clear message otherwise."""
    v = value.strip().lower()
    if v == "left":
        return "left"
    if v == "right":
        return "right"
    raise ValueError(f"arm must be 'left' or 'right', got {value!r}")


@dataclass(frozen=True)
class Pose:
    """A rigid pose in the world frame: position in metres, orientation as a unit quaternion [w, x, y, z]."""

    position_m: tuple[float, float, float]
    quat_wxyz: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)

    @staticmethod
    def from_arrays(position_m: Sequence[float] | NDArray[Any], quat_wxyz: Sequence[float] | NDArray[Any]) -> Pose:
        p = tuple(float(x) for x in position_m)
        q = np.asarray(quat_wxyz, dtype=float)
        if len(p) != 3 or q.shape != (4,):
            raise ValueError("a pose needs 3 position values and 4 quaternion values [w, x, y, z]")
        n = float(np.linalg.norm(q))
        if not np.isfinite(n) or n < 1e-9:
            raise ValueError(f"quaternion {q.tolist()} is not a valid rotation")
        qn = q / n
        return Pose((p[0], p[1], p[2]), (float(qn[0]), float(qn[1]), float(qn[2]), float(qn[3])))

    @staticmethod
    def from_matrix(T: NDArray[Any]) -> Pose:
        from scipy.spatial.transform import Rotation

        xyzw = Rotation.from_matrix(np.asarray(T)[:3, :3]).as_quat()
        return Pose.from_arrays(np.asarray(T)[:3, 3], [xyzw[3], xyzw[0], xyzw[1], xyzw[2]])

    def as_matrix(self) -> NDArray[np.float64]:
        from scipy.spatial.transform import Rotation

        w, x, y, z = self.quat_wxyz
        T = np.eye(4)
        T[:3, :3] = Rotation.from_quat([x, y, z, w]).as_matrix()
        T[:3, 3] = self.position_m
        return T

    @property
    def p(self) -> NDArray[np.float64]:
        return np.asarray(self.position_m, dtype=float)

    @property
    def q(self) -> NDArray[np.float64]:
        return np.asarray(self.quat_wxyz, dtype=float)

    def as_list(self) -> list[float]:
        return [*self.position_m, *self.quat_wxyz]


QUAT_NORM_TOL = 1e-3
"""A skill's quaternion argument must have a norm within this of 1 (the guard's unit check uses the same)."""


def quat_problem(quat_wxyz: Sequence[float], what: str) -> str | None:
    """Why a quaternion argument [w, x, y, z] is unusable (not 4 finite numbers, or not unit length within
    ``QUAT_NORM_TOL``), or None."""
    try:
        q = np.asarray([float(x) for x in quat_wxyz], dtype=float)
    except (TypeError, ValueError):
        return f"{what}: the quaternion must be 4 numbers [w, x, y, z], got {quat_wxyz!r}"
    if q.shape != (4,) or not np.all(np.isfinite(q)):
        return f"{what}: the quaternion must be 4 finite numbers [w, x, y, z], got {q.tolist()}"
    n = float(np.linalg.norm(q))
    if abs(n - 1.0) > QUAT_NORM_TOL:
        return (f"{what}: the quaternion {q.tolist()} is not a unit quaternion (norm {n:.4g}; it must be 1 within "
                f"{QUAT_NORM_TOL:g})")
    return None
