"""Eye-to-hand camera calibration with a ChArUco board held by an arm.

Set-up: the camera is fixed; a ChArUco board is fixed to an arm's gripper. For each view i we know the flange pose
in the arm's base frame (``T_base_flange_i``, from the arm's feedback) and detect the board in the image
(``T_cam_board_i``, by PnP on the ChArUco corners). Both unknowns are rigid:
``T_base_flange_i · T_flange_board = T_base_cam · T_cam_board_i``. OpenCV's hand-eye solver is given the inverted
robot poses (the eye-to-hand form), so the transform it returns is ``T_base_cam``. ``calibrate_arm`` then refines
that closed-form solution over all views' corners at once (``calibration_refine``), which is what the rig uses.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import cv2
import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.robot_drivers.calibration.refine import CornerView, refine_eye_to_hand

log = logging.getLogger(__name__)

MIN_CORNERS = 6
MIN_VIEWS = 5
MAX_REPROJECTION_PX = 2.0  # a board pose that explains its corners worse than this is a failed PnP


class CalibrationError(RuntimeError):
    """Calibration data that cannot give a trustworthy result (too few views, degenerate motion, ...)."""


@dataclass(frozen=True)
class BoardSpec:
    """A ChArUco board: squares along x and y, square and marker edge in metres, ArUco dictionary name."""

    squares_x: int = 5
    squares_y: int = 7
    square_m: float = 0.04
    marker_m: float = 0.03
    dictionary: str = "DICT_5X5_100"

    def __post_init__(self) -> None:
        if self.squares_x < 2 or self.squares_y < 2:
            raise ValueError("a ChArUco board needs at least 2x2 squares")
        if not (0 < self.marker_m < self.square_m):
            raise ValueError(f"need 0 < marker_m < square_m, got marker {self.marker_m} m, square {self.square_m} m")
        if not hasattr(cv2.aruco, self.dictionary):
            raise ValueError(f"unknown ArUco dictionary {self.dictionary!r} (e.g. DICT_5X5_100)")

    def board(self) -> cv2.aruco.CharucoBoard:
        dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))
        return cv2.aruco.CharucoBoard((self.squares_x, self.squares_y), self.square_m, self.marker_m, dictionary)

    @property
    def size_m(self) -> tuple[float, float]:
        return self.squares_x * self.square_m, self.squares_y * self.square_m


@dataclass(frozen=True)
class BoardDetection:
    """The board's pose in the camera's OpenCV frame from one image."""

    T_cam_board: NDArray[np.float64]
    n_corners: int
    reprojection_px: float
    object_points_m: NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 3)))  # corners, board frame
    image_points_px: NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 2)))  # the same, in the image


@dataclass(frozen=True)
class HandEyeResult:
    """One arm's eye-to-hand solution and how well it explains the views."""

    T_base_cam: NDArray[np.float64]
    T_flange_board: NDArray[np.float64]
    n_views: int
    residual_mm_mean: float
    residual_mm_max: float
    residual_deg_mean: float
    residual_deg_max: float
    reprojection_px_rms: float = math.nan  # corners vs the joint solution (calibrate_arm only)
    dropped_views: tuple[int, ...] = ()  # indices of views left out as outliers (calibrate_arm only)


def _T(R: NDArray[np.float64], t: NDArray[np.float64]) -> NDArray[np.float64]:
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = np.asarray(t, dtype=float).reshape(3)
    return T


def _rotation_angle_deg(R: NDArray[np.float64]) -> float:
    return math.degrees(float(np.linalg.norm(Rotation.from_matrix(R).as_rotvec())))


def detect_board(image: NDArray[np.uint8], spec: BoardSpec, K: NDArray[np.float64],
                 dist: NDArray[np.float64] | None = None) -> BoardDetection | None:
    """Detect the ChArUco board and estimate its pose; None if fewer than MIN_CORNERS corners are found or the
    pose explains them worse than MAX_REPROJECTION_PX (PnP on a few, nearly collinear corners can diverge)."""
    board = spec.board()
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    corners, ids, _, _ = cv2.aruco.CharucoDetector(board).detectBoard(gray)
    if ids is None or len(ids) < MIN_CORNERS:
        return None
    obj_pts, img_pts = board.matchImagePoints(corners, ids)  # type: ignore[call-overload]
    dist_coeffs = np.zeros(5) if dist is None else np.asarray(dist, dtype=float)
    ok, rvec, tvec = cv2.solvePnP(obj_pts, img_pts, K, dist_coeffs, flags=cv2.SOLVEPNP_ITERATIVE)
    if not ok:
        return None
    projected, _ = cv2.projectPoints(obj_pts, rvec, tvec, K, dist_coeffs)
    err = float(np.sqrt(np.mean(np.sum((projected.reshape(-1, 2) - img_pts.reshape(-1, 2)) ** 2, axis=1))))
    if not math.isfinite(err) or err > MAX_REPROJECTION_PX:
        log.info("board pose rejected: reprojection %.3g px from %d corners", err, len(ids))
        return None
    R_cam_board = np.asarray(cv2.Rodrigues(rvec)[0], dtype=float)
    obj = np.asarray(obj_pts, dtype=float).reshape(-1, 3)
    img = np.asarray(img_pts, dtype=float).reshape(-1, 2)
    return BoardDetection(_T(R_cam_board, np.asarray(tvec, dtype=float)), len(ids), err, obj, img)


def solve_eye_to_hand(T_base_flange: Sequence[NDArray[np.float64]], T_cam_board: Sequence[NDArray[np.float64]],
                      method: int = cv2.CALIB_HAND_EYE_PARK) -> HandEyeResult:
    """Solve T_base_cam (and T_flange_board) from paired robot poses and board detections of one arm."""
    if len(T_base_flange) != len(T_cam_board):
        raise CalibrationError(f"{len(T_base_flange)} robot poses but {len(T_cam_board)} board detections")
    n = len(T_base_flange)
    if n < MIN_VIEWS:
        raise CalibrationError(f"need at least {MIN_VIEWS} views with the board detected, got {n}")
    rotations = np.array([np.asarray(T)[:3, :3] for T in T_base_flange])
    spread_deg = max(_rotation_angle_deg(rotations[0].T @ R) for R in rotations)
    if spread_deg < 10.0:
        raise CalibrationError(f"the board orientations differ by at most {spread_deg:.1f}°; tilt the gripper "
                               "more between views (at least ~10-30° about different axes)")
    # Eye-to-hand: hand OpenCV the base pose seen from the flange ("gripper2base" := flange->base inverted).
    T_flange_base = [np.linalg.inv(np.asarray(T, dtype=float)) for T in T_base_flange]
    R_cam, t_cam = cv2.calibrateHandEye(
        [T[:3, :3] for T in T_flange_base], [T[:3, 3] for T in T_flange_base],
        [np.asarray(T)[:3, :3] for T in T_cam_board], [np.asarray(T)[:3, 3] for T in T_cam_board], method=method)
    T_base_cam = _T(np.asarray(R_cam, dtype=float), np.asarray(t_cam, dtype=float))
    if not np.all(np.isfinite(T_base_cam)):
        raise CalibrationError("the hand-eye solver returned no finite solution (degenerate views?)")
    # The board on the flange, from every view; the average is the fixed mount.
    per_view = [np.linalg.inv(np.asarray(Tf)) @ T_base_cam @ np.asarray(Tc)
                for Tf, Tc in zip(T_base_flange, T_cam_board, strict=True)]
    R_mean = Rotation.from_matrix(np.array([T[:3, :3] for T in per_view])).mean().as_matrix()
    T_flange_board = _T(R_mean, np.mean([T[:3, 3] for T in per_view], axis=0))
    result = _with_residuals(T_base_cam, T_flange_board, T_base_flange, T_cam_board)
    log.info("hand-eye from %d views: residual %.2f mm mean / %.2f mm max, %.2f° mean", n,
             result.residual_mm_mean, result.residual_mm_max, result.residual_deg_mean)
    return result


def _with_residuals(T_base_cam: NDArray[np.float64], T_flange_board: NDArray[np.float64],
                    T_base_flange: Sequence[NDArray[np.float64]], T_cam_board: Sequence[NDArray[np.float64]]
                    ) -> HandEyeResult:
    """The solution with how far each view's board pose from the robot is from its pose from the camera."""
    t_err, r_err = [], []
    for Tf, Tc in zip(T_base_flange, T_cam_board, strict=True):
        predicted = np.asarray(Tf) @ T_flange_board  # board pose from the robot
        observed = T_base_cam @ np.asarray(Tc)  # board pose from the camera
        t_err.append(1000.0 * float(np.linalg.norm(predicted[:3, 3] - observed[:3, 3])))
        r_err.append(_rotation_angle_deg(predicted[:3, :3].T @ observed[:3, :3]))
    return HandEyeResult(T_base_cam, T_flange_board, len(t_err), float(np.mean(t_err)), float(np.max(t_err)),
                         float(np.mean(r_err)), float(np.max(r_err)))


def calibrate_arm(T_base_flange: Sequence[NDArray[np.float64]], detections: Sequence[BoardDetection],
                  K: NDArray[np.float64], dist: NDArray[np.float64] | None = None) -> HandEyeResult:
    """One arm's eye-to-hand calibration: the closed-form hand-eye solution, refined over all views' corners
    with outlier views dropped. Residuals are those of the kept views."""
    closed = solve_eye_to_hand(T_base_flange, [d.T_cam_board for d in detections])
    views = [CornerView(np.asarray(Tf, dtype=float), d.object_points_m, d.image_points_px)
             for Tf, d in zip(T_base_flange, detections, strict=True)]
    if any(len(v.object_points_m) == 0 for v in views):
        return closed  # detections without their corners: nothing to refine over
    refined = refine_eye_to_hand(views, K, dist, closed.T_base_cam, closed.T_flange_board, MIN_VIEWS)
    if not (np.all(np.isfinite(refined.T_base_cam)) and np.all(np.isfinite(refined.T_flange_board))):
        raise CalibrationError("the joint refinement returned no finite solution")
    kept = refined.kept
    result = _with_residuals(refined.T_base_cam, refined.T_flange_board, [T_base_flange[i] for i in kept],
                             [detections[i].T_cam_board for i in kept])
    result = replace(result, reprojection_px_rms=refined.rms_px, dropped_views=tuple(refined.dropped))
    log.info("refined over %d views' corners: %.2f px RMS, %d view(s) dropped", result.n_views,
             result.reprojection_px_rms, len(result.dropped_views))
    return result


def render_board_view(spec: BoardSpec, T_cam_board: NDArray[np.float64], K: NDArray[np.float64],
                      width: int, height: int, px_per_m: float = 4000.0, supersample: int = 3) -> NDArray[np.uint8]:
    """Render the board as a pinhole camera at ``T_cam_board`` would see it (grey background, RGB uint8).

    Used to make synthetic calibration views: the board image is warped by the plane-induced homography at
    ``supersample`` times the resolution and then area-averaged down, like a real sensor integrates light.
    """
    w_m, h_m = spec.size_m
    board_img = spec.board().generateImage((round(w_m * px_per_m), round(h_m * px_per_m)), marginSize=0)
    # Board-image pixel (x, y) -> board point ((x + 0.5)/ppm, (y + 0.5)/ppm, 0) -> camera pixel.
    S = np.array([[1 / px_per_m, 0, 0.5 / px_per_m], [0, 1 / px_per_m, 0.5 / px_per_m], [0, 0, 1]])
    T = np.asarray(T_cam_board, dtype=float)
    ss = max(1, int(supersample))
    # Camera pixel centres at integers: a supersampled pixel centre u' maps to u = (u' + 0.5)/ss - 0.5.
    up = np.array([[ss, 0, 0.5 * (ss - 1)], [0, ss, 0.5 * (ss - 1)], [0, 0, 1]])
    H = up @ K @ np.column_stack([T[:3, 0], T[:3, 1], T[:3, 3]]) @ S
    big = cv2.warpPerspective(board_img, H, (width * ss, height * ss), flags=cv2.INTER_LINEAR,
                              borderValue=(128, 128, 128))
    warped = cv2.resize(big, (width, height), interpolation=cv2.INTER_AREA)
    return np.ascontiguousarray(np.repeat(warped[:, :, None], 3, axis=2))
