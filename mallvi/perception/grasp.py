"""2D grasp points after MALLVi A.8: category rules, the radial rule for irregular shapes, a principal-axis yaw.

- block: the mask centroid (the nearest mask pixel if the centroid falls outside).
- round: the centre of the mask's minimum enclosing circle (nearest mask pixel if outside).
- rimmed: a point on the rim nearest the robot (largest image row on the vertical line through the centroid),
  moved inward by a quarter of the rim thickness seen along that line.
- irregular: the radial rule: r* = min{r | mask[C + r(cos t, sin t)] = 1} with t ~ U(0, 2 pi) and C the centroid
  (r* = 0 when the centroid is inside the mask); seeded, retried over several angles.
Every point is verified to lie inside the mask.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from mallvi.perception.projection import wrap_half_turn
from mallvi.perception.types import GraspPoint, PerceptionError, mask_pixels


def principal_yaw(mask: NDArray[np.bool_]) -> float:
    """Image angle of the mask's minor principal axis (finger-closing direction), in (-pi/2, pi/2]."""
    vs, us = mask_pixels(mask)
    if us.size < 3:
        return 0.0
    cov = np.cov(np.stack([us, vs]).astype(np.float64))
    evals, evecs = np.linalg.eigh(cov)
    minor = evecs[:, int(np.argmin(evals))]
    return wrap_half_turn(float(np.arctan2(minor[1], minor[0])))


def _nearest_inside(mask: NDArray[np.bool_], u: float, v: float) -> tuple[int, int]:
    ui, vi = round(u), round(v)
    h, w = mask.shape
    if 0 <= vi < h and 0 <= ui < w and mask[vi, ui]:
        return ui, vi
    vs, us = mask_pixels(mask)
    k = int(np.argmin((us - u) ** 2 + (vs - v) ** 2))
    return int(us[k]), int(vs[k])


def radial_point(mask: NDArray[np.bool_], rng: np.random.Generator, tries: int = 16) -> tuple[int, int]:
    """The A.8 radial rule from the mask centroid along random directions; falls back to the nearest pixel."""
    vs, us = mask_pixels(mask)
    cu, cv = float(us.mean()), float(vs.mean())
    h, w = mask.shape
    r_max = float(np.hypot(h, w))
    for _ in range(tries):
        theta = rng.uniform(0.0, 2.0 * np.pi)
        for r in np.arange(0.0, r_max, 0.5):
            u, v = round(cu + r * np.cos(theta)), round(cv + r * np.sin(theta))
            if not (0 <= u < w and 0 <= v < h):
                break
            if mask[v, u]:
                return u, v
    return _nearest_inside(mask, cu, cv)


def _rim_point(mask: NDArray[np.bool_]) -> tuple[int, int]:
    vs, us = mask_pixels(mask)
    cu = round(us.mean())
    col = np.nonzero(mask[:, cu])[0]
    if col.size == 0:
        return _nearest_inside(mask, us.mean(), vs.mean())
    bottom = int(col.max())
    run = 0
    while bottom - run - 1 >= 0 and mask[bottom - run - 1, cu]:
        run += 1
    return _nearest_inside(mask, cu, bottom - run / 4.0)


def grasp_point(mask: NDArray[np.bool_], category: str, seed: int = 0) -> GraspPoint:
    """The grasp pixel for a mask of the given A.8 category; raises PerceptionError on an empty mask."""
    mask = np.asarray(mask, dtype=bool)
    if not mask.any():
        raise PerceptionError("cannot choose a grasp point on an empty mask")
    vs, us = mask_pixels(mask)
    if category == "block":
        u, v = _nearest_inside(mask, float(us.mean()), float(vs.mean()))
    elif category == "round":
        pts = np.stack([us, vs], axis=1).astype(np.float32)
        (cu, cv), _ = cv2.minEnclosingCircle(pts)
        u, v = _nearest_inside(mask, cu, cv)
    elif category == "rimmed":
        u, v = _rim_point(mask)
    else:
        u, v = radial_point(mask, np.random.default_rng(seed))
    if not mask[v, u]:  # the A.8 verification step; the rules above guarantee it
        raise PerceptionError(f"grasp point ({u}, {v}) is outside the mask")
    return GraspPoint(u=u, v=v, yaw_rad=principal_yaw(mask), category=category)
