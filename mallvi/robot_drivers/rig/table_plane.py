"""The table's height from one depth frame: the most common height of the calibrated depth cloud.

On a tabletop rig the table top is the largest horizontal surface the camera sees, so the peak of the
height histogram of the back-projected depth (world frame, from the calibration) is the table top.
"""

from __future__ import annotations

import numpy as np

from mallvi.contracts.observation import Observation
from mallvi.robot_drivers.rig.rig import depth_to_world_points

BIN_M = 0.002


def table_top_z_from_depth(obs: Observation, z_range_m: tuple[float, float] = (0.3, 1.2)) -> float:
    """Height of the table top in the world frame (m); ValueError when the depth shows no dominant surface."""
    z = depth_to_world_points(obs, stride=2, max_points=200_000)[:, 2]
    z = z[(z > z_range_m[0]) & (z < z_range_m[1])]
    if z.size < 1000:
        raise ValueError(f"too little valid depth ({z.size} points) to find the table")
    counts, edges = np.histogram(z, bins=np.arange(z_range_m[0], z_range_m[1] + BIN_M, BIN_M))
    k = int(np.argmax(counts))
    if counts[k] < 0.05 * z.size:
        raise ValueError("no dominant horizontal surface in the depth; is the table in view?")
    near = z[(z >= edges[max(k - 1, 0)]) & (z < edges[min(k + 2, len(edges) - 1)])]
    return float(np.median(near))


def check_table_against_config(measured_z_m: float, configured_z_m: float, tolerance_m: float = 0.01) -> None:
    """Refuse to start when the camera, through its calibration, sees the table elsewhere than the configuration
    says it is: a camera pose that is off moves every perceived object by as much, and grasps go into the table."""
    gap = measured_z_m - configured_z_m
    if abs(gap) > tolerance_m:
        raise ValueError(f"calibration check failed: through the calibration the camera sees the table top at "
                         f"{measured_z_m:.3f} m, {abs(gap) * 100:.1f} cm {'above' if gap > 0 else 'below'} the "
                         f"configured {configured_z_m:.3f} m (tolerance {tolerance_m * 100:.0f} cm); the camera pose "
                         "is likely off: run `mallvi calibrate` again. Nothing was moved.")
