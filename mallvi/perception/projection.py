"""From pixels and masks to world-frame 3D: pinhole back-projection, robust centres and extents.

A block seen from above shows its top face and one or two side faces. Its centre is estimated as:
x/y = centre of the oriented rectangle bounding the mask's 3D points in the xy-plane (every visible face of a box
projects into its footprint, so this holds when its top is hidden under a stacked object), z = midway between
the top z (the highest well-populated level) and the bottom z (lowest robust z of the mask, or the support plane
when the object rests on it).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.observation import Observation
from mallvi.perception.frame_memo import per_frame
from mallvi.perception.types import LocalizationError


def k_inverse(K: NDArray[np.float64]) -> NDArray[np.float64]:
    """Closed-form inverse of an upper-triangular pinhole K (cheaper than a LAPACK call per pixel set)."""
    fx, skew, cx = float(K[0, 0]), float(K[0, 1]), float(K[0, 2])
    fy, cy = float(K[1, 1]), float(K[1, 2])
    if fx == 0.0 or fy == 0.0:
        raise ValueError(f"K has a zero focal length: {K.tolist()}")
    return np.array([
        [1.0 / fx, -skew / (fx * fy), (skew * cy - cx * fy) / (fx * fy)],
        [0.0, 1.0 / fy, -cy / fy],
        [0.0, 0.0, 1.0],
    ])


def rigid_inverse(T: NDArray[np.float64]) -> NDArray[np.float64]:
    """Inverse of a 4x4 rigid transform."""
    out = np.eye(4)
    out[:3, :3] = T[:3, :3].T
    out[:3, 3] = -T[:3, :3].T @ T[:3, 3]
    return out


def backproject(
    u: float, v: float, depth_m: float, K: NDArray[np.float64], T_world_cam: NDArray[np.float64]
) -> NDArray[np.float64]:
    """World point of pixel (u, v) at z-depth ``depth_m`` (pixel centres at integer + 0.5 are the caller's choice)."""
    if not (np.isfinite(depth_m) and depth_m > 0):
        raise LocalizationError(f"no valid depth at pixel ({u:.1f}, {v:.1f})")
    p_cam = depth_m * (k_inverse(K) @ np.array([u, v, 1.0]))
    return np.asarray(T_world_cam[:3, :3] @ p_cam + T_world_cam[:3, 3], dtype=float)


def project(points_world: NDArray[np.float64], K: NDArray[np.float64], T_world_cam: NDArray[np.float64]
            ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Pixel coordinates (N×2) and z-depths (N) of world points (N×3)."""
    T_cam_world = rigid_inverse(T_world_cam)
    p_cam = np.atleast_2d(points_world) @ T_cam_world[:3, :3].T + T_cam_world[:3, 3]
    z = p_cam[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        uv = (p_cam @ K.T)[:, :2] / z[:, None]
    return uv, z


def points_world(mask: NDArray[np.bool_], obs: Observation) -> NDArray[np.float64]:
    """World points (N×3) of the mask's pixels that have valid depth (pixel centres at +0.5)."""
    x, y, w, h = cv2.boundingRect(np.ascontiguousarray(mask, dtype=np.uint8))  # only the mask's box is scanned
    box = obs.depth_m[y : y + h, x : x + w]
    vs, us = np.nonzero(mask[y : y + h, x : x + w] & (box > 0) & np.isfinite(box))
    d = box[vs, us].astype(np.float64)
    vs, us = vs + y, us + x
    rays = np.stack([us + 0.5, vs + 0.5, np.ones_like(d)], axis=1) @ k_inverse(obs.K).T
    p_cam = rays * d[:, None]
    return np.asarray(p_cam @ obs.T_world_cam[:3, :3].T + obs.T_world_cam[:3, 3], dtype=float)


@per_frame
def world_z_image(obs: Observation) -> NDArray[np.float64] | None:
    """World height (m) of every pixel's depth point (meaningless where depth is 0); None without any depth."""
    if not bool((obs.depth_m > 0).any()):
        return None
    h, w = obs.depth_m.shape
    u, v = np.meshgrid(np.arange(w) + 0.5, np.arange(h) + 0.5)
    r = obs.T_world_cam[2, :3] @ k_inverse(obs.K)  # world z of a unit-depth ray, per pixel coordinate
    return np.asarray(obs.depth_m * (r[0] * u + r[1] * v + r[2]) + obs.T_world_cam[2, 3], dtype=float)


def erode(mask: NDArray[np.bool_], px: int) -> NDArray[np.bool_]:
    """Erode by ``px`` pixels, unless that would leave fewer than a quarter of the pixels."""
    if px <= 0:
        return mask
    kernel = np.ones((2 * px + 1, 2 * px + 1), np.uint8)
    out = cv2.erode(mask.astype(np.uint8), kernel).astype(bool)
    return out if out.sum() >= max(4, mask.sum() // 4) else mask


@dataclass(frozen=True)
class MaskGeometry:
    """What the 3D points of one mask say about the object (world frame, metres).

    ``extent_m`` is axis-aligned in the world; ``size_m`` is in the object's frame, whose x axis has world yaw
    ``yaw_rad`` (the footprint rectangle's first side; a box's yaw is only defined modulo pi/2).
    """

    center_world: tuple[float, float, float]
    top_world: tuple[float, float, float]
    extent_m: tuple[float, float, float]
    top_yaw_rad: float
    n_points: int
    size_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    yaw_rad: float = 0.0


@per_frame
def support_z(obs: Observation, bin_m: float = 0.004, min_level_frac: float = 0.3) -> float | None:
    """Height of the table from the depth image: the highest height level holding at least ``min_level_frac`` of
    the most populated level's points (and 2 % of all points); None without depth."""
    valid = (obs.depth_m > 0) & np.isfinite(obs.depth_m)
    if valid.sum() < 100:
        return None
    step = max(1, int(np.sqrt(valid.sum() / 20000)))
    sub = np.zeros_like(valid)
    sub[::step, ::step] = valid[::step, ::step]
    z = points_world(sub, obs)[:, 2]
    lo, hi = np.percentile(z, [1, 99])
    if hi - lo < bin_m:
        return float(np.median(z))
    hist, edges = np.histogram(z, bins=max(1, int(np.ceil((hi - lo) / bin_m))), range=(lo, hi))
    # the highest strongly populated level: a floor seen around the table can hold more pixels than the table
    strong = np.nonzero(hist >= max(min_level_frac * hist.max(), 0.02 * z.size))[0]
    k = int(strong.max()) if strong.size else int(np.argmax(hist))
    band = z[(z >= edges[k] - bin_m) & (z <= edges[k + 1] + bin_m)]
    return float(np.median(band))


def _top_yaw(xy: NDArray[np.float64]) -> float:
    """Finger-closing yaw across the top face's shorter side (square tops: modulo pi/2, in [-pi/4, pi/4])."""
    if xy.shape[0] < 5:
        return 0.0
    (_, _), (w, h), angle_deg = cv2.minAreaRect((xy * 1000.0).astype(np.float32))
    a = np.deg2rad(angle_deg)  # direction of side "w"
    if max(w, h) <= 1.15 * min(w, h):  # square: any side works
        return float((a + np.pi / 4) % (np.pi / 2) - np.pi / 4)
    return wrap_half_turn(a if w < h else a + np.pi / 2)


def wrap_half_turn(angle_rad: float) -> float:
    """Wrap an axis direction (defined modulo pi) to (-pi/2, pi/2]."""
    r = float((angle_rad + np.pi / 2) % np.pi - np.pi / 2)
    return np.pi / 2 if r <= -np.pi / 2 + 1e-12 else r


def footprint(xy: NDArray[np.float64], trim_pct: float = 1.0
              ) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """Centre, side lengths and yaw (of the first side, rad) of the oriented rectangle bounding ``xy``
    (percentile-trimmed against outliers).

    A box's visible faces all project into its footprint, so even when its top is hidden (an object stacked on
    it) the side faces' points still span the footprint's near edges and the rectangle recovers its centre.
    """
    if xy.shape[0] < 3:
        c = xy.mean(axis=0) if xy.shape[0] else np.zeros(2)
        return c, np.zeros(2), 0.0
    (_, _), (_, _), angle_deg = cv2.minAreaRect((xy * 1000.0).astype(np.float32))
    a = np.deg2rad(angle_deg)
    R = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    local = xy @ R  # coordinates along the rectangle's axes
    lo = np.percentile(local, trim_pct, axis=0)
    hi = np.percentile(local, 100.0 - trim_pct, axis=0)
    return R @ (0.5 * (lo + hi)), hi - lo, float(a)


def _hidden_depth_correction(
    c_xy: NDArray[np.float64], sides: NDArray[np.float64], xy: NDArray[np.float64], height_m: float,
    cam_xy: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Push a flat footprint away from the camera when it is only the front face of a hidden-top box.

    When the points span a thin strip (short side < 0.6 x long side) that is at least 0.6 x as tall as it is
    wide, the camera sees one vertical face and nothing behind it (the top is covered, e.g. by a stacked block).
    The box is then assumed as deep as it is wide, and the centre moves half that depth away from the camera.
    """
    long_m, short_m = float(max(sides)), float(min(sides))
    if long_m <= 0 or short_m >= 0.6 * long_m or height_m < 0.6 * long_m:
        return c_xy
    centred = xy - xy.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    normal = vt[-1]  # across the strip
    if float(np.dot(normal, c_xy - cam_xy)) < 0:
        normal = -normal
    return np.asarray(c_xy + normal * 0.5 * (long_m - short_m), dtype=float)


def _top_level(z: NDArray[np.float64], band_m: float) -> float:
    """The height of the highest well-populated level: the median of the points near the 98th percentile."""
    hi = float(np.percentile(z, 98))
    near = z[(z >= hi - band_m) & (z <= hi + band_m)]
    return float(np.median(near)) if near.size else hi  # none near: the 98th percentile fell into a gap


#: mask points this close to the support plane are the table's
TABLE_BAND_M = 0.004
#: an object whose other mask points all lie this far above the support plane does not stand on it
RESTS_ON_TABLE_M = 0.02


def mask_geometry(
    mask: NDArray[np.bool_],
    obs: Observation,
    erode_px: int = 0,
    top_band_m: float = 0.008,
    table_z: float | None = None,
    min_band_m: float = 0.0015,
    rest_snap_m: float = 0.015,
) -> MaskGeometry:
    """Centre, top centre, extent and top-face yaw of the object under ``mask``.

    Raises LocalizationError when fewer than 5 mask pixels have valid depth.
    """
    pts = points_world(erode(mask, erode_px), obs)
    if pts.shape[0] < 5:
        raise LocalizationError(f"only {pts.shape[0]} mask pixels have valid depth; cannot localise")
    if table_z is not None:
        off = pts[:, 2] > table_z + TABLE_BAND_M
        if int(off.sum()) >= 5 and float(np.percentile(pts[off, 2], 2)) > table_z + RESTS_ON_TABLE_M:
            pts = pts[off]  # it stands on another object: table pixels in its mask (a table of its colour) are not it
    z = pts[:, 2]
    z_top = _top_level(z, top_band_m)
    z_low = float(np.percentile(z, 2))
    spread = float(np.median(np.abs(z[np.abs(z - z_top) < top_band_m] - z_top))) if z.size else 0.0
    band = float(np.clip(3.0 * 1.4826 * spread, min_band_m, top_band_m))
    top = pts[np.abs(z - z_top) <= band]
    if top.shape[0] < 3:
        top = pts[z >= z_top - top_band_m]
    z_bottom = z_low
    if table_z is not None and z_top - top_band_m > table_z and z_low - table_z < rest_snap_m:
        z_bottom = table_z  # it rests on the support plane (its lowest visible rows are hidden or eroded)
    body = pts[pts[:, 2] > z_bottom + 0.003]
    if body.shape[0] < 10:
        body = pts
    c_xy, sides, side_yaw = footprint(body[:, :2])
    corrected = _hidden_depth_correction(c_xy, sides, body[:, :2], z_top - z_bottom, obs.T_world_cam[:2, 3])
    if not np.allclose(corrected, c_xy):
        sides = np.full(2, float(max(sides)))  # the square footprint the correction assumed
    c_xy = corrected
    x_c, y_c = float(c_xy[0]), float(c_xy[1])
    lo_xy = np.percentile(pts[:, :2], 2, axis=0)
    hi_xy = np.percentile(pts[:, :2], 98, axis=0)
    t_lo = np.percentile(top[:, :2], 1, axis=0)
    t_hi = np.percentile(top[:, :2], 99, axis=0)
    # the top face bounds x/y of prisms; other points (sides) can only widen it a little in a perspective view
    dx = float(max(t_hi[0] - t_lo[0], 0.0)) if top.shape[0] >= 20 else float(hi_xy[0] - lo_xy[0])
    dy = float(max(t_hi[1] - t_lo[1], 0.0)) if top.shape[0] >= 20 else float(hi_xy[1] - lo_xy[1])
    return MaskGeometry(
        center_world=(x_c, y_c, 0.5 * (z_top + z_bottom)),
        top_world=(x_c, y_c, z_top),
        extent_m=(dx, dy, float(max(z_top - z_bottom, 0.0))),
        top_yaw_rad=_top_yaw(top[:, :2]),
        n_points=int(pts.shape[0]),
        size_m=(float(sides[0]), float(sides[1]), float(max(z_top - z_bottom, 0.0))),
        yaw_rad=wrap_half_turn(side_yaw),
    )


def robust_point(mask: NDArray[np.bool_], obs: Observation, erode_px: int = 0) -> NDArray[np.float64]:
    """The object's estimated 3D centre in the world frame (see ``mask_geometry``)."""
    return np.asarray(mask_geometry(mask, obs, erode_px=erode_px, table_z=support_z(obs)).center_world)


def extent_from_mask(mask: NDArray[np.bool_], obs: Observation, erode_px: int = 0) -> tuple[float, float, float]:
    """Axis-aligned world extent (dx, dy, dz) in metres of the object under ``mask``."""
    return mask_geometry(mask, obs, erode_px=erode_px, table_z=support_z(obs)).extent_m


def surface_point(mask: NDArray[np.bool_], obs: Observation, u: int, v: int, window_px: int = 3
                  ) -> NDArray[np.float64]:
    """World point at pixel (u, v) using the median depth of valid mask pixels in a window around it."""
    h, w = mask.shape
    for r in (window_px, 2 * window_px, 4 * window_px):
        y0, y1, x0, x1 = max(0, v - r), min(h, v + r + 1), max(0, u - r), min(w, u + r + 1)
        d = obs.depth_m[y0:y1, x0:x1][mask[y0:y1, x0:x1] & (obs.depth_m[y0:y1, x0:x1] > 0)]
        if d.size:
            return backproject(u + 0.5, v + 0.5, float(np.median(d)), obs.K, obs.T_world_cam)
    raise LocalizationError(f"no valid depth near pixel ({u}, {v}) inside the mask")
