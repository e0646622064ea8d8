"""Unit and frame conversions between mallvi (metres, radians, quaternions) and the Piper SDK's integers.

piper_sdk units (C_PiperInterface_V2): positions in 0.001 mm (= micrometres), angles in 0.001 degree,
the gripper stroke in 0.001 mm, the gripper effort in 0.001 N·m. The end pose is the flange (link 6) in the arm's
base frame with Euler angles RX, RY, RZ applied about the fixed axes x, then y, then z (R = Rz·Ry·Rx), which is
what ``piper_sdk.kinematics.C_PiperForwardKinematics`` returns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

UM_PER_M = 1_000_000  # one SDK position unit is 0.001 mm = 1 µm
MDEG_PER_DEG = 1000  # one SDK angle unit is 0.001°
# The grasp centre lies this far in front of the mallvi end-effector point along its x axis (Arm contract).
EE_TO_GRASP_M = 0.12


def metres_to_sdk_um(value_m: float) -> int:
    """Metres -> SDK position units (0.001 mm). Raises ValueError for NaN/inf."""
    if not math.isfinite(value_m):
        raise ValueError(f"position {value_m!r} m is not finite")
    return round(value_m * UM_PER_M)


def sdk_um_to_metres(value_um: int) -> float:
    """SDK position units (0.001 mm) -> metres."""
    return value_um / UM_PER_M


def radians_to_sdk_mdeg(value_rad: float) -> int:
    """Radians -> SDK angle units (0.001°). Raises ValueError for NaN/inf."""
    if not math.isfinite(value_rad):
        raise ValueError(f"angle {value_rad!r} rad is not finite")
    return round(math.degrees(value_rad) * MDEG_PER_DEG)


def sdk_mdeg_to_radians(value_mdeg: int) -> float:
    """SDK angle units (0.001°) -> radians."""
    return math.radians(value_mdeg / MDEG_PER_DEG)


def joints_to_sdk(q_rad: Sequence[float] | NDArray[Any]) -> tuple[int, int, int, int, int, int]:
    """Six joint angles in radians -> six SDK joint values (0.001°)."""
    q = [float(v) for v in q_rad]
    if len(q) != 6:
        raise ValueError(f"the Piper has 6 joints, got {len(q)} values")
    a, b, c, d, e, f = (radians_to_sdk_mdeg(v) for v in q)
    return a, b, c, d, e, f


def joints_from_sdk(values_mdeg: Sequence[int]) -> NDArray[np.float64]:
    """Six SDK joint values (0.001°) -> joint angles in radians."""
    return np.array([sdk_mdeg_to_radians(int(v)) for v in values_mdeg], dtype=float)


def gripper_opening_to_sdk_um(opening: float, max_stroke_m: float) -> int:
    """Gripper opening 0 (closed)..1 (open) -> SDK stroke (0.001 mm), clamped to [0, 1]."""
    if not math.isfinite(opening):
        raise ValueError(f"gripper opening {opening!r} is not finite")
    return metres_to_sdk_um(min(max(opening, 0.0), 1.0) * max_stroke_m)


def gripper_opening_from_sdk_um(stroke_um: int, max_stroke_m: float) -> float:
    """SDK stroke (0.001 mm) -> gripper opening 0..1 (not clamped, so a sensor glitch stays visible)."""
    return sdk_um_to_metres(stroke_um) / max_stroke_m


def T_base_flange_from_sdk(end_pose: Sequence[int]) -> NDArray[np.float64]:
    """SDK end pose (X, Y, Z in 0.001 mm; RX, RY, RZ in 0.001°) -> 4×4 flange pose in the base frame."""
    x, y, z, rx, ry, rz = (int(v) for v in end_pose)
    T = np.eye(4)
    angles_deg = [rx / MDEG_PER_DEG, ry / MDEG_PER_DEG, rz / MDEG_PER_DEG]
    T[:3, :3] = Rotation.from_euler("xyz", angles_deg, degrees=True).as_matrix()
    T[:3, 3] = [sdk_um_to_metres(x), sdk_um_to_metres(y), sdk_um_to_metres(z)]
    return T


def T_base_flange_to_sdk(T_base_flange: NDArray[Any]) -> tuple[int, int, int, int, int, int]:
    """4×4 flange pose in the base frame -> SDK end pose (X, Y, Z in 0.001 mm; RX, RY, RZ in 0.001°)."""
    T = np.asarray(T_base_flange, dtype=float)
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        raise ValueError("the flange pose must be a finite 4x4 matrix")
    rx, ry, rz = Rotation.from_matrix(T[:3, :3]).as_euler("xyz", degrees=True)
    return (
        metres_to_sdk_um(float(T[0, 3])),
        metres_to_sdk_um(float(T[1, 3])),
        metres_to_sdk_um(float(T[2, 3])),
        round(float(rx) * MDEG_PER_DEG),
        round(float(ry) * MDEG_PER_DEG),
        round(float(rz) * MDEG_PER_DEG),
    )


def T_flange_ee(flange_to_ee_m: float) -> NDArray[np.float64]:
    """The mallvi end-effector frame in the flange frame.

    The flange's z axis points out of the tool plate (the approach direction) and the fingers open along its
    y axis. mallvi's end-effector frame (the same as the simulator's ``ee_link``) has x = approach and
    y = finger opening: x_ee = z_flange, y_ee = y_flange, z_ee = -x_flange. The end-effector point lies
    ``flange_to_ee_m`` along the flange z axis.
    """
    T = np.eye(4)
    T[:3, :3] = np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    T[:3, 3] = [0.0, 0.0, flange_to_ee_m]
    return T
