"""Joint refinement of an eye-to-hand calibration over every view's ChArUco corners.

The closed-form hand-eye solvers see each view only through its own PnP board pose, whose error (chiefly its
depth and its tilt, from a few corners on a small board) they cannot weigh. This refinement instead finds the two
rigid unknowns, ``T_cam_base`` and ``T_flange_board``, that best explain all detected corners at once::

    corner_px ≈ project(K, dist, T_cam_base · T_base_flange_i · T_flange_board · corner_board)

by robust (Huber, 1 px) non-linear least squares started from the closed-form solution. Views that the joint
solution explains much worse than the others (a bad detection, a flange pose read while the arm still moved) are
dropped and the rest solved again.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray
from scipy.optimize import least_squares
from scipy.spatial.transform import Rotation

log = logging.getLogger(__name__)

HUBER_SCALE_PX = 1.0
#: a view whose corners the joint solution misses by more than this RMS (px) and by more than
#: OUTLIER_FACTOR times the median view's is dropped
OUTLIER_MIN_PX = 1.0
OUTLIER_FACTOR = 3.0


@dataclass(frozen=True)
class CornerView:
    """One view's data for the refinement: the flange pose reported by the arm and the corners seen."""

    T_base_flange: NDArray[np.float64]
    object_points_m: NDArray[np.float64]  # (N, 3) in the board frame
    image_points_px: NDArray[np.float64]  # (N, 2)


@dataclass(frozen=True)
class RefinedHandEye:
    """The refined unknowns, each kept view's RMS corner error (px) and the indices of the dropped views."""

    T_base_cam: NDArray[np.float64]
    T_flange_board: NDArray[np.float64]
    view_rms_px: list[float]
    kept: list[int]
    dropped: list[int]

    @property
    def rms_px(self) -> float:
        return float(math.sqrt(np.mean(np.square(self.view_rms_px)))) if self.view_rms_px else math.nan


def _to_params(T: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.concatenate([Rotation.from_matrix(T[:3, :3]).as_rotvec(), T[:3, 3]])


def _from_params(p: NDArray[np.float64]) -> NDArray[np.float64]:
    T = np.eye(4)
    T[:3, :3] = Rotation.from_rotvec(p[:3]).as_matrix()
    T[:3, 3] = p[3:6]
    return T


def _view_residuals(T_cam_base: NDArray[np.float64], T_flange_board: NDArray[np.float64], view: CornerView,
                    K: NDArray[np.float64], dist: NDArray[np.float64]) -> NDArray[np.float64]:
    T_cam_board = T_cam_base @ view.T_base_flange @ T_flange_board
    rvec = Rotation.from_matrix(T_cam_board[:3, :3]).as_rotvec()
    projected, _ = cv2.projectPoints(view.object_points_m, rvec, T_cam_board[:3, 3], K, dist)
    return np.asarray(projected.reshape(-1, 2) - view.image_points_px, dtype=float)


def _solve(T_cam_base: NDArray[np.float64], T_flange_board: NDArray[np.float64], views: Sequence[CornerView],
           K: NDArray[np.float64], dist: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    def residuals(p: NDArray[np.float64]) -> NDArray[np.float64]:
        A, B = _from_params(p[:6]), _from_params(p[6:])
        return np.concatenate([_view_residuals(A, B, v, K, dist).ravel() for v in views])

    x0 = np.concatenate([_to_params(T_cam_base), _to_params(T_flange_board)])
    fit = least_squares(residuals, x0, loss="huber", f_scale=HUBER_SCALE_PX, x_scale="jac", max_nfev=200)
    return _from_params(fit.x[:6]), _from_params(fit.x[6:])


def refine_eye_to_hand(views: Sequence[CornerView], K: NDArray[np.float64], dist: NDArray[np.float64] | None,
                       T_base_cam: NDArray[np.float64], T_flange_board: NDArray[np.float64],
                       min_views: int) -> RefinedHandEye:
    """Refine a closed-form solution over all views' corners; drop views explained much worse than the rest
    (never below ``min_views``) and solve again."""
    d = np.zeros(5) if dist is None else np.asarray(dist, dtype=float)
    K = np.asarray(K, dtype=float)
    kept = list(range(len(views)))
    T_cam_base = np.linalg.inv(np.asarray(T_base_cam, dtype=float))
    T_fb = np.asarray(T_flange_board, dtype=float)
    dropped: list[int] = []
    while True:
        T_cam_base, T_fb = _solve(T_cam_base, T_fb, [views[i] for i in kept], K, d)
        rms = [float(np.sqrt(np.mean(np.sum(_view_residuals(T_cam_base, T_fb, views[i], K, d) ** 2, axis=1))))
               for i in kept]
        limit = max(OUTLIER_MIN_PX, OUTLIER_FACTOR * float(np.median(rms)))
        worst = int(np.argmax(rms))
        if rms[worst] <= limit or len(kept) <= min_views:
            break
        log.info("calibration view %d dropped: its corners are %.2f px off the joint solution (limit %.2f px)",
                 kept[worst], rms[worst], limit)
        dropped.append(kept.pop(worst))
    return RefinedHandEye(np.linalg.inv(T_cam_base), T_fb, rms, kept, sorted(dropped))
