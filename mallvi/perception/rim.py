"""Centres of round objects from circle fits: a rimmed object's (bowl, mug) rim, an upright cylinder's side.

A camera looking down at a bowl from one side sees its far rim whole, but its near rim and near wall are thin in
the image and are lost in the depth holes at the step from the rim down to the inside. The visible points then
span only part of the footprint and their bounding rectangle's centre lies too far from the camera. The rim's
visible arc still lies on the rim circle, so a least-squares circle through it (the algebraic fit: linear in the
centre and in r² - |c|²) finds the centre from an arc of a half turn or more.

An upright cylinder (a bottle, a can) shows the camera only its near half; the centre of those points' bounding
rectangle lies too near the camera by about half the radius. Its side's points, seen from above, lie on a circle
too: ``upright_axis`` fits one to the body's middle heights and accepts it only when they fit it closely (a
box's two visible faces do not).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.observation import Observation
from mallvi.perception.projection import footprint, points_world

RIM_BAND_M = 0.01  # points within this of the highest level are the rim
MAX_RESIDUAL_M = 0.004
MIN_ARC_RAD = 0.75 * np.pi


def fit_circle(xy: NDArray[np.float64]) -> tuple[NDArray[np.float64], float, float]:
    """Centre, radius and RMS radial residual (m) of the least-squares circle through ``xy`` (N×2)."""
    A = np.column_stack([2.0 * xy, np.ones(len(xy))])
    b = np.sum(xy * xy, axis=1)
    sol, *_ = np.linalg.lstsq(A, b, rcond=None)
    centre = sol[:2]
    radius = float(np.sqrt(max(sol[2] + float(centre @ centre), 0.0)))
    residual = float(np.sqrt(np.mean((np.linalg.norm(xy - centre, axis=1) - radius) ** 2)))
    return centre, radius, residual


def rim_centre(mask: NDArray[np.bool_], obs: Observation, max_radius_m: float = 0.2
               ) -> NDArray[np.float64] | None:
    """The rim circle's centre (world x, y), or None when the rim is not a well-fitting arc of at least
    MIN_ARC_RAD (then the caller keeps its own estimate)."""
    pts = points_world(mask, obs)
    if pts.shape[0] < 30:
        return None
    z_top = float(np.percentile(pts[:, 2], 98))
    rim = pts[pts[:, 2] >= z_top - RIM_BAND_M][:, :2]
    if rim.shape[0] < 20:
        return None
    centre, radius, residual = fit_circle(rim)
    if not (0.01 < radius < max_radius_m) or residual > MAX_RESIDUAL_M:
        return None
    angles = np.sort(np.arctan2(rim[:, 1] - centre[1], rim[:, 0] - centre[0]))
    gaps = np.diff(np.concatenate([angles, angles[:1] + 2.0 * np.pi]))
    if 2.0 * np.pi - float(gaps.max()) < MIN_ARC_RAD:
        return None
    return np.asarray(centre, dtype=float)


def upright_axis(mask: NDArray[np.bool_], obs: Observation, table_z: float, max_radius_m: float = 0.08
                 ) -> NDArray[np.float64] | None:
    """The axis (world x, y) of an upright cylinder under ``mask`` from its side's points at 20-60 % of its
    height, or None when they are not a close-fitting arc (RMS under 2 mm and 5 % of the radius) of at least
    0.6 π as wide as the circle."""
    pts = points_world(mask, obs)
    if pts.shape[0] < 50:
        return None
    height = float(np.percentile(pts[:, 2], 98)) - table_z
    band = pts[(pts[:, 2] > table_z + 0.2 * height) & (pts[:, 2] < table_z + 0.6 * height)][:, :2]
    if band.shape[0] < 30:
        return None
    centre, radius, residual = fit_circle(band)
    if not (0.01 < radius < max_radius_m) or residual > min(0.05 * radius, 0.002):
        return None
    _, sides, _ = footprint(band)
    if not 0.8 < 2.0 * radius / max(float(max(sides)), 1e-6) < 1.25:
        return None  # a cylinder's near half spans its whole diameter across the view
    angles = np.sort(np.arctan2(band[:, 1] - centre[1], band[:, 0] - centre[0]))
    gaps = np.diff(np.concatenate([angles, angles[:1] + 2.0 * np.pi]))
    if 2.0 * np.pi - float(gaps.max()) < 0.6 * np.pi:
        return None
    return np.asarray(centre, dtype=float)
