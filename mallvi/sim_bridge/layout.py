"""Frame constants of the simulated tabletop (world frame: +x robot's right, +y away, +z up; metres, radians).

Values follow BENCHMARK.md "World, frames, units"; the arm mount follows DESIGN.md "Simulation bridge"
(bases raised on a 0.2 m pedestal so top-down grasps reach the whole half-table).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.contracts.geometry import ArmSide

PHYSICS_DT_S = 1.0 / 250.0
FRICTION = 0.5

TABLE_SIZE_M = (1.2, 0.7, 0.05)
TABLE_CENTER_XY_M = (0.0, 0.0)
TABLE_TOP_NOMINAL_Z_M = 0.74
TABLE_TOP_OFFSET_RANGE_M = (-0.03, 0.0)  # b ~ U[-0.03, 0] per episode, drawn from the seed
WALL_Y_M = 0.4

ARM_BASE_Y_M = -0.30
ARM_BASE_Z_M = 0.95
PEDESTAL_HEIGHT_M = 0.2
PEDESTAL_HALF_WIDTH_M = 0.07  # square pedestal under each arm's base, from the table top up to the base
ARM_BASE_YAW_RAD = math.pi / 2  # the arm's own +x (forward) points along world +y
DEFAULT_ARM_SPACING_M = 0.7

# Cameras: position, viewing direction, image size, vertical field of view.
HEAD_CAMERA = ((-0.032, -0.45, 1.35), (0.0, 0.6, -0.8), (640, 360), math.radians(45.0))
FRONT_CAMERA = ((0.0, 0.23, 1.33), (0.0, -1.0, -1.02), (640, 480), math.radians(93.0))
WRIST_CAMERA_SIZE = (320, 180)
WRIST_CAMERA_FOVY_RAD = math.radians(45.0)


def arm_base_position(side: ArmSide, spacing_m: float = DEFAULT_ARM_SPACING_M) -> tuple[float, float, float]:
    """World position of an arm's base: x = ∓spacing/2 (left arm at negative x)."""
    x = -spacing_m / 2 if side == "left" else spacing_m / 2
    return (x, ARM_BASE_Y_M, ARM_BASE_Z_M)


def arm_base_quat_wxyz() -> tuple[float, float, float, float]:
    """Orientation of both arm bases: a yaw of +90° about world z."""
    return (math.cos(ARM_BASE_YAW_RAD / 2), 0.0, 0.0, math.sin(ARM_BASE_YAW_RAD / 2))


def top_down_quat_wxyz(yaw_rad: float = 0.0) -> tuple[float, float, float, float]:
    """EE orientation for a top-down grasp: x (approach) points down, y (finger opening) at ``yaw_rad`` from world x."""
    c, s = math.cos(yaw_rad), math.sin(yaw_rad)
    R: NDArray[np.float64] = np.array([[0.0, c, s], [0.0, s, -c], [-1.0, 0.0, 0.0]])
    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return (float(w), float(x), float(y), float(z))
