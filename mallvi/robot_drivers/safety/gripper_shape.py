"""The gripper's shape for the depth-cloud check: boxes in the end-effector frame, swept along a path.

End-effector frame: x = approach, y = finger-opening direction, z = across the fingers (metres). A box is
(min corner, max corner). ``PIPER_GRIPPER_BOXES_M`` is the Piper's wrist and gripper body and its two fingers
fully open, as modelled in ``robot_drivers/embodiment`` (wrist 0.05 m square, gripper body 0.045 × 0.11 m from
0.01 to 0.06 m past the end-effector point, fingers 0.07 m long, 0.012 m thick, 0.02 m wide, 0.07 m apart when
open, tips 0.01 m past the grasp centre). Measure your own gripper if it differs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy.spatial import cKDTree

Box = tuple[tuple[float, float, float], tuple[float, float, float]]

PIPER_GRIPPER_BOXES_M: tuple[Box, ...] = (
    ((-0.05, -0.055, -0.025), (0.06, 0.055, 0.025)),  # wrist and gripper body
    ((0.06, -0.047, -0.01), (0.13, 0.047, 0.01)),  # the two open fingers and the gap between them
)


def first_box_hit(poses_world: Sequence[NDArray[np.float64]], boxes_ee: Sequence[Box],
                  obstacles_world: NDArray[np.float64], margin_m: float
                  ) -> tuple[int, NDArray[np.float64], float] | None:
    """The first waypoint (4×4 end-effector poses, world frame) at which an obstacle point comes within
    ``margin_m`` of a gripper box: (waypoint index, the point, its distance from the box) or None.

    Waypoints are expected closer together than ``margin_m``, so the margin also covers the motion between them.
    """
    pts = np.asarray(obstacles_world, dtype=float).reshape(-1, 3)
    if len(pts) == 0 or not poses_world or not boxes_ee:
        return None
    tree = cKDTree(pts)
    lows = np.array([b[0] for b in boxes_ee], dtype=float)
    highs = np.array([b[1] for b in boxes_ee], dtype=float)
    centres, halves = (lows + highs) / 2, (highs - lows) / 2
    for i, T in enumerate(poses_world):
        R, t = T[:3, :3], T[:3, 3]
        for c, h in zip(centres, halves, strict=True):
            reach = float(np.linalg.norm(h + margin_m))
            idx = tree.query_ball_point(R @ c + t, reach)
            if not idx:
                continue
            local = (pts[idx] - t) @ R - c  # the points in the box's own frame
            outside = np.maximum(np.abs(local) - h, 0.0)
            dist = np.linalg.norm(outside, axis=1)
            k = int(np.argmin(dist))
            if dist[k] < margin_m:
                return i, pts[idx[k]], float(dist[k])
    return None


def without_points_in_boxes(cloud_world: NDArray[np.float64], poses_world: Sequence[NDArray[np.float64]],
                            boxes_ee: Sequence[Box], margin_m: float) -> NDArray[np.float64]:
    """The cloud less the points within ``margin_m`` of a gripper box at any of ``poses_world`` (4×4): the
    camera sees the grippers themselves where they stand."""
    cloud = np.asarray(cloud_world, dtype=float).reshape(-1, 3)
    if len(cloud) == 0:
        return cloud
    keep = np.ones(len(cloud), dtype=bool)
    for T in poses_world:
        local = (cloud - T[:3, 3]) @ T[:3, :3]
        for lo, hi in boxes_ee:
            inside = np.all((local >= np.asarray(lo) - margin_m) & (local <= np.asarray(hi) + margin_m), axis=1)
            keep &= ~inside
    return cloud[keep]
