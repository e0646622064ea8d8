"""What lies behind the table is no table-top object: a wall or backdrop seen above the table's far edge.

Two tests, both from depth:

- ``behind_table``, per pixel: the table's far edge is where the pixels at table height end, measured along the
  camera's horizontal viewing direction; a point further away than that edge (plus a margin) cannot stand on
  the table. Such pixels are a wall, a backdrop or the room, whatever their colour (under a tinted light a
  painted wall takes the hue of a block).
- ``is_wall_face``, per detected region: a table-top object shows the camera some of its top, so its points
  cover an area of the table; a wall seen from the front shows only its face, whose points lie on one upright
  plane and leave a line as their footprint (``is_upright_sheet``). The thinnest table-top objects (a marker
  lying down, a 2 cm die) leave a footprint at least a centimetre thick. An object whose top is hidden (a block
  under another in a stack) shows only its front face too, so a sheet is a wall only at the table's far edge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.observation import Observation
from mallvi.perception.frame_memo import per_frame
from mallvi.perception.projection import k_inverse, support_z, world_z_image

#: a footprint thinner than this across its main axis is a face seen edge-on from above, not an object's top
MIN_FOOTPRINT_THICKNESS_M = 0.004
#: ... and at least this many times longer than thick (a speck of a few points is left to the other checks)
MIN_SHEET_ASPECT = 3.0
#: pixels within this height of the support plane count as table when its far edge is found
TABLE_BAND_M = 0.004
#: the far edge is this percentile of the table pixels' distance (a wall's lowest rows at table height are few)
FAR_EDGE_PERCENTILE = 98.0
#: a point this far beyond the far edge is behind the table
BEHIND_MARGIN_M = 0.03
#: an upright sheet whose points lie (median) no nearer than this in front of the far edge is a wall's face
WALL_NEAR_EDGE_M = 0.05


@dataclass(frozen=True)
class FarEdge:
    """Where the table ends, as a distance from the camera along its horizontal viewing direction."""

    forward_xy: NDArray[np.float64]  # unit vector, world frame
    camera_xy: NDArray[np.float64]  # world frame, metres
    distance_m: float

    def distance_of(self, points_world: NDArray[np.float64]) -> NDArray[np.float64]:
        """Each world point's distance from the camera along ``forward_xy`` (metres)."""
        return (np.asarray(points_world, dtype=float)[:, :2] - self.camera_xy) @ self.forward_xy


def footprint_spread_m(points_world: NDArray[np.float64]) -> tuple[float, float]:
    """(length, thickness) of the points' horizontal footprint along its principal axes, each the 2nd to
    98th percentile spread in metres."""
    xy = np.asarray(points_world, dtype=float)[:, :2]
    centred = xy - xy.mean(axis=0)
    _, axes = np.linalg.eigh(centred.T @ centred)  # eigenvalues ascending: axes[:, 1] is the main axis
    spreads = [float(np.subtract(*np.percentile(centred @ axes[:, k], [98, 2]))) for k in (1, 0)]
    return spreads[0], spreads[1]


def is_upright_sheet(points_world: NDArray[np.float64]) -> bool:
    """Whether the points lie on one upright plane (a wall's face), leaving no footprint on the table."""
    if len(points_world) < 20:
        return False
    length_m, thickness_m = footprint_spread_m(points_world)
    return thickness_m < MIN_FOOTPRINT_THICKNESS_M and length_m >= MIN_SHEET_ASPECT * thickness_m


def far_edge(obs: Observation, z_world: NDArray[np.float64], table_z_m: float) -> FarEdge | None:
    """The table's far edge, or None when the camera looks straight down or sees too little of the table."""
    forward = obs.T_world_cam[:2, 2]  # the optical axis in the world, horizontal part
    if float(np.hypot(*forward)) < 0.2:
        return None
    forward = forward / float(np.hypot(*forward))
    valid = (obs.depth_m > 0) & np.isfinite(obs.depth_m)
    table = valid & (np.abs(z_world - table_z_m) <= TABLE_BAND_M)
    if int(table.sum()) < 500:
        return None
    distance_m = _pixel_distances(obs, forward)
    return FarEdge(forward, np.asarray(obs.T_world_cam[:2, 3], dtype=float),
                   float(np.percentile(distance_m[table], FAR_EDGE_PERCENTILE)))


@per_frame
def frame_far_edge(obs: Observation) -> FarEdge | None:
    """``far_edge`` of the frame at its own height image and table height, once per frame; None without depth."""
    z, table_z = world_z_image(obs), support_z(obs)
    return None if z is None or table_z is None else far_edge(obs, z, table_z)


@per_frame
def frame_behind_table(obs: Observation) -> NDArray[np.bool_]:
    """``behind_table`` of the frame at its own height image, table height and far edge, once per frame (all
    False without depth; the result is shared: do not modify it)."""
    z, table_z = world_z_image(obs), support_z(obs)
    if z is None or table_z is None:
        return np.zeros(obs.depth_m.shape, dtype=bool)
    return behind_table(obs, z, table_z, frame_far_edge(obs))


def _pixel_distances(obs: Observation, forward_xy: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per pixel, its depth point's distance from the camera along ``forward_xy`` (metres)."""
    h, w = obs.depth_m.shape
    u, v = np.meshgrid(np.arange(w) + 0.5, np.arange(h) + 0.5)
    rays_world = obs.T_world_cam[:2, :3] @ k_inverse(obs.K)  # world x, y of a unit-depth ray per (u, v, 1)
    per_pixel = forward_xy @ rays_world  # distance along `forward_xy` of a unit-depth ray
    return np.asarray(obs.depth_m * (per_pixel[0] * u + per_pixel[1] * v + per_pixel[2]), dtype=float)


def behind_table(obs: Observation, z_world: NDArray[np.float64], table_z_m: float,
                 edge: FarEdge | None = None) -> NDArray[np.bool_]:
    """Pixels whose depth point lies beyond the table's far edge (False where depth is missing, and everywhere
    when there is no far edge to tell: ``far_edge`` is None). ``edge``: the frame's, if already found."""
    if edge is None:
        edge = far_edge(obs, z_world, table_z_m)
    out = np.zeros(obs.depth_m.shape, dtype=bool)
    if edge is None:
        return out
    valid = (obs.depth_m > 0) & np.isfinite(obs.depth_m)
    out[valid] = _pixel_distances(obs, edge.forward_xy)[valid] > edge.distance_m + BEHIND_MARGIN_M
    return out


def is_wall_face(points_world: NDArray[np.float64], edge: FarEdge | None) -> bool:
    """Whether the points are a wall's face: an upright sheet at the table's far edge (not the front face of an
    object whose top is hidden, further in front). False when there is no far edge to tell."""
    if edge is None or not is_upright_sheet(points_world):
        return False
    return float(np.median(edge.distance_of(points_world))) >= edge.distance_m - WALL_NEAR_EDGE_M
