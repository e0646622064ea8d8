"""Whether a calibration can describe a real rig, and whether it describes the rig at hand.

``check_intrinsics`` and ``check_mounts`` refuse values no camera and no two-arm rig has (a zero focal length,
a principal point outside the image, both arms at one mount, arms metres apart in height, a camera far from the
arms); ``check_over_table`` refuses arms far below or above the station's table; ``layout_mismatch`` compares
the calibrated mounts with the ones a station has (``ArmLayout``), within ``MOUNT_TOLERANCE_M`` and
``MOUNT_TOLERANCE_DEG``. Every refusal names the file and the key.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.geometry import ARM_SIDES, ArmSide
from mallvi.robot_drivers.calibration.calibration_yaml import CalibrationFileError

#: two Piper bases (15 cm across) cannot stand closer than this
MIN_ARM_SPACING_M = 0.15
#: a two-arm rig sharing one table and one camera is not wider than this
MAX_ARM_SPACING_M = 3.0
#: the two bases stand on one table: their heights differ by less than this
MAX_MOUNT_HEIGHT_DIFF_M = 0.5
#: a RealSense sees a rig's table within this distance of each arm's base
MAX_CAMERA_DISTANCE_M = 4.0
#: a base from this far below the table top (a recessed mount) ...
MOUNT_BELOW_TABLE_M = 0.3
#: ... up to this far above it (a pedestal or a frame overhead)
MOUNT_ABOVE_TABLE_M = 1.2
#: calibrated and station mounts this close are the same layout (a re-mounted arm moves by more)
MOUNT_TOLERANCE_M = 0.02
MOUNT_TOLERANCE_DEG = 5.0


class ImplausibleCalibrationError(CalibrationFileError):
    """A well-formed calibration whose values no real rig has."""


class LayoutMismatchError(CalibrationFileError):
    """A calibration made for another arm layout than the station's."""


class CalibrationCheckError(CalibrationFileError):
    """A calibration the station's own check refuses (its camera sees the table elsewhere than configured)."""


def check_intrinsics(K: NDArray[np.float64], width: int, height: int, file: str) -> None:
    """Positive focal lengths, the principal point inside the image, the last row (0, 0, 1)."""
    fx, fy, cx, cy = float(K[0, 0]), float(K[1, 1]), float(K[0, 2]), float(K[1, 2])
    if fx <= 0 or fy <= 0:
        raise ImplausibleCalibrationError(f"{file}: camera.K: the focal lengths must be positive, got fx={fx:g}, "
                                          f"fy={fy:g} pixels")
    if not (np.allclose(K[2], [0.0, 0.0, 1.0], atol=1e-6) and abs(K[1, 0]) < 1e-6):
        raise ImplausibleCalibrationError(f"{file}: camera.K is not a camera matrix (rows [fx s cx], [0 fy cy], "
                                          "[0 0 1])")
    if not (0 <= cx <= width and 0 <= cy <= height):
        raise ImplausibleCalibrationError(f"{file}: camera.K: the principal point ({cx:g}, {cy:g}) lies outside the "
                                          f"{width}x{height} image")


def check_mounts(mounts: Mapping[ArmSide, NDArray[np.float64]], T_world_cam: NDArray[np.float64], file: str) -> None:
    """Two arms at distinct mounts, on one table, within a camera's view."""
    for side, T in mounts.items():
        distance = float(np.linalg.norm(T[:3, 3] - T_world_cam[:3, 3]))
        if distance > MAX_CAMERA_DISTANCE_M:
            raise ImplausibleCalibrationError(
                f"{file}: arms.{side}.T_world_base: the {side} arm's base is {distance:.2f} m from the camera "
                f"(camera.T_world_cam); a rig's camera is within {MAX_CAMERA_DISTANCE_M:g} m of both arms")
    if not all(s in mounts for s in ARM_SIDES):
        return
    left, right = mounts["left"][:3, 3], mounts["right"][:3, 3]
    spacing = float(np.linalg.norm(left - right))
    if spacing < MIN_ARM_SPACING_M:
        raise ImplausibleCalibrationError(
            f"{file}: arms.left.T_world_base and arms.right.T_world_base put both arms' bases {spacing * 100:.1f} cm "
            f"apart; two arms cannot stand closer than {MIN_ARM_SPACING_M * 100:.0f} cm")
    if spacing > MAX_ARM_SPACING_M:
        raise ImplausibleCalibrationError(
            f"{file}: arms.left.T_world_base and arms.right.T_world_base put the arms {spacing:.2f} m apart; the arms "
            f"of a rig share a table (at most {MAX_ARM_SPACING_M:g} m apart)")
    dz = abs(float(left[2] - right[2]))
    if dz > MAX_MOUNT_HEIGHT_DIFF_M:
        raise ImplausibleCalibrationError(
            f"{file}: arms.left.T_world_base and arms.right.T_world_base put one base {dz:.2f} m higher than the "
            f"other; both stand on one table (at most {MAX_MOUNT_HEIGHT_DIFF_M:g} m apart in height)")


def check_over_table(mounts: Mapping[ArmSide, NDArray[np.float64]], table_top_z_m: float, file: str,
                     station: str) -> None:
    """Each base stands near the station's table top (from ``MOUNT_BELOW_TABLE_M`` below to
    ``MOUNT_ABOVE_TABLE_M`` above)."""
    for side, T in mounts.items():
        dz = float(T[2, 3]) - table_top_z_m
        if not -MOUNT_BELOW_TABLE_M <= dz <= MOUNT_ABOVE_TABLE_M:
            where = f"{abs(dz):.2f} m {'below' if dz < 0 else 'above'}"
            raise ImplausibleCalibrationError(
                f"{file}: arms.{side}.T_world_base puts the {side} arm's base {where} the table top of the {station} "
                f"(z = {table_top_z_m:.3f} m); a base stands from {MOUNT_BELOW_TABLE_M:g} m below to "
                f"{MOUNT_ABOVE_TABLE_M:g} m above it")


@dataclass(frozen=True)
class ArmLayout:
    """Where a station's arms stand: each base's T_world_base, and what the layout is (for messages)."""

    mounts: Mapping[ArmSide, NDArray[np.float64]]
    name: str

    @property
    def spacing_m(self) -> float:
        return float(np.linalg.norm(self.mounts["left"][:3, 3] - self.mounts["right"][:3, 3]))

    def describe(self) -> str:
        parts = [f"{s} at ({', '.join(f'{v:.3f}' for v in self.mounts[s][:3, 3])}) m" for s in ARM_SIDES
                 if s in self.mounts]
        spacing = f", {self.spacing_m:.2f} m apart" if all(s in self.mounts for s in ARM_SIDES) else ""
        return f"{' and '.join(parts)}{spacing}"


def _yaw_deg_between(A: NDArray[np.float64], B: NDArray[np.float64]) -> float:
    R = A[:3, :3].T @ B[:3, :3]
    return math.degrees(math.acos(max(-1.0, min(1.0, (float(np.trace(R)) - 1.0) / 2.0))))


def layout_mismatch(calibrated: ArmLayout, station: ArmLayout) -> str | None:
    """Why the calibrated mounts are not the station's (None when every arm is within ``MOUNT_TOLERANCE_M`` and
    ``MOUNT_TOLERANCE_DEG`` of the station's mount)."""
    off = []
    for side in ARM_SIDES:
        if side not in calibrated.mounts or side not in station.mounts:
            continue
        A, B = calibrated.mounts[side], station.mounts[side]
        distance = float(np.linalg.norm(A[:3, 3] - B[:3, 3]))
        angle = _yaw_deg_between(A, B)
        if distance > MOUNT_TOLERANCE_M or angle > MOUNT_TOLERANCE_DEG:
            off.append(f"the {side} mount is {distance * 100:.1f} cm and {angle:.1f}° off")
    if not off:
        return None
    return (f"{calibrated.name} was made for arms {calibrated.describe()}, but {station.name} has them "
            f"{station.describe()}: {'; '.join(off)} (tolerance {MOUNT_TOLERANCE_M * 100:.0f} cm, "
            f"{MOUNT_TOLERANCE_DEG:g}°)")
