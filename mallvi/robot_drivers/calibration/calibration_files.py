"""Calibration data on disk: saved views (images + robot poses) and the rig calibration YAML that runs load.

Views folder::

    DIR/views.yaml   board: {squares_x, squares_y, square_m, marker_m, dictionary}
                     camera: {K: 3x3, dist: [k1, k2, p1, p2, k3], width, height}
                     views: [{arm: left, image: left_000.png, T_base_flange: 4x4}, ...]
    DIR/*.png        the colour images

Rig calibration YAML (``mallvi calibrate --out``): ``camera`` (K, dist, width, height, T_world_cam),
``arms.<side>`` (T_world_base, T_base_cam, T_flange_board, residuals, views), ``board`` and ``anchor``.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import yaml
from numpy.typing import NDArray

from mallvi.contracts.geometry import ArmSide, parse_arm
from mallvi.robot_drivers.calibration.eye_to_hand import (
    BoardDetection,
    BoardSpec,
    CalibrationError,
    calibrate_arm,
    detect_board,
)

log = logging.getLogger(__name__)

VIEWS_FILE = "views.yaml"
FORMAT_VERSION = 1


class CalibrationFileError(ValueError):
    """A calibration or views file that is missing or malformed; the message names the file and the key."""


@dataclass(frozen=True)
class CalibrationView:
    arm: ArmSide
    image_path: Path
    T_base_flange: NDArray[np.float64]


@dataclass(frozen=True)
class CalibrationViews:
    board: BoardSpec
    K: NDArray[np.float64]
    dist: NDArray[np.float64]
    width: int
    height: int
    views: list[CalibrationView]


@dataclass(frozen=True)
class ArmCalibration:
    T_world_base: NDArray[np.float64]
    T_base_cam: NDArray[np.float64]
    T_flange_board: NDArray[np.float64]
    n_views: int
    residual_mm_mean: float
    residual_mm_max: float
    residual_deg_mean: float
    residual_deg_max: float
    reprojection_px_rms: float = math.nan  # the kept views' corners against the joint solution
    dropped_views: tuple[str, ...] = ()  # images whose board pose disagreed with the rest (outliers)


@dataclass(frozen=True)
class RigCalibration:
    """Everything `mallvi run` needs from calibration: the camera pose and intrinsics, each arm's mount."""

    T_world_cam: NDArray[np.float64]
    K: NDArray[np.float64]
    dist: NDArray[np.float64]
    width: int
    height: int
    arms: Mapping[ArmSide, ArmCalibration]
    board: BoardSpec = field(default_factory=BoardSpec)
    anchor: ArmSide = "left"


def _matrix(value: Any, shape: tuple[int, ...], where: str) -> NDArray[np.float64]:
    try:
        m = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as e:
        raise CalibrationFileError(f"{where} must be a {shape} matrix of numbers") from e
    if m.shape != shape or not np.all(np.isfinite(m)):
        raise CalibrationFileError(f"{where} must be a finite {'x'.join(map(str, shape))} matrix, got shape {m.shape}")
    return m


def _rigid(value: Any, where: str) -> NDArray[np.float64]:
    T = _matrix(value, (4, 4), where)
    R = T[:3, :3]
    if not (np.allclose(R.T @ R, np.eye(3), atol=1e-4) and np.isclose(np.linalg.det(R), 1.0, atol=1e-4)
            and np.allclose(T[3], [0, 0, 0, 1])):
        raise CalibrationFileError(f"{where} is not a rigid transform (rotation not orthonormal or bad last row)")
    return T


def _read_yaml(path: Path, what: str) -> dict[str, Any]:
    if not path.is_file():
        raise CalibrationFileError(f"{what} {str(path)!r} not found")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise CalibrationFileError(f"{what} {str(path)!r} is not valid YAML: {e}") from e
    if not isinstance(data, dict):
        raise CalibrationFileError(f"{what} {str(path)!r} must contain a mapping at the top level")
    return data


def _get(data: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in data:
        raise CalibrationFileError(f"{where}: missing key {key!r}")
    return data[key]


def _board_from(data: Any, where: str) -> BoardSpec:
    if not isinstance(data, dict):
        raise CalibrationFileError(f"{where}: 'board' must be a mapping")
    try:
        return BoardSpec(**data)
    except (TypeError, ValueError) as e:
        raise CalibrationFileError(f"{where}: bad board: {e}") from e


def load_views(folder: str | Path) -> CalibrationViews:
    """Read a views folder written by `mallvi calibrate` (or by hand); raises CalibrationFileError."""
    root = Path(folder)
    if not root.is_dir():
        raise CalibrationFileError(f"views folder {str(root)!r} does not exist")
    path = root / VIEWS_FILE
    data = _read_yaml(path, "views file")
    where = str(path)
    cam = _get(data, "camera", where)
    views_data = _get(data, "views", where)
    if not isinstance(cam, dict) or not isinstance(views_data, list):
        raise CalibrationFileError(f"{where}: 'camera' must be a mapping and 'views' a list")
    views = []
    for i, v in enumerate(views_data):
        w = f"{where}: views[{i}]"
        if not isinstance(v, dict):
            raise CalibrationFileError(f"{w} must be a mapping")
        try:
            arm = parse_arm(str(_get(v, "arm", w)))
        except ValueError as e:
            raise CalibrationFileError(f"{w}: {e}") from e
        image = root / str(_get(v, "image", w))
        if not image.is_file():
            raise CalibrationFileError(f"{w}: image {str(image)!r} not found")
        views.append(CalibrationView(arm, image, _rigid(_get(v, "T_base_flange", w), f"{w}.T_base_flange")))
    return CalibrationViews(
        board=_board_from(_get(data, "board", where), where),
        K=_matrix(_get(cam, "K", where), (3, 3), f"{where}: camera.K"),
        dist=_matrix(cam.get("dist", [0.0] * 5), (5,), f"{where}: camera.dist"),
        width=int(_get(cam, "width", where)),
        height=int(_get(cam, "height", where)),
        views=views,
    )


def save_views(folder: str | Path, views: CalibrationViews) -> Path:
    """Write ``views.yaml`` next to the images (image paths stored relative to the folder)."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    data = {
        "board": asdict(views.board),
        "camera": {"K": views.K.tolist(), "dist": views.dist.tolist(), "width": views.width, "height": views.height},
        "views": [{"arm": v.arm, "image": v.image_path.name, "T_base_flange": v.T_base_flange.tolist()}
                  for v in views.views],
    }
    path = root / VIEWS_FILE
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def calibrate_rig(views: CalibrationViews, anchor: ArmSide, T_world_base_anchor: NDArray[np.float64]
                  ) -> tuple[RigCalibration, dict[ArmSide, list[str]]]:
    """Detect the board in every view, solve each arm's hand-eye problem (closed form, then refined over all
    corners with outlier views dropped) and express all in the world frame.

    The world frame is fixed by the anchor arm's configured mount ``T_world_base_anchor``; the camera pose and
    the other arm's mount follow from the calibration. Returns the calibration and, per arm, the images in
    which the board was not found.
    """
    skipped: dict[ArmSide, list[str]] = {}
    solutions: dict[ArmSide, Any] = {}
    dropped: dict[ArmSide, tuple[str, ...]] = {}
    for side in ("left", "right"):
        arm_views = [v for v in views.views if v.arm == side]
        if not arm_views:
            continue
        T_flange: list[NDArray[np.float64]] = []
        detections: list[BoardDetection] = []
        names: list[str] = []
        for v in arm_views:
            image = cv2.imread(str(v.image_path), cv2.IMREAD_COLOR)
            if image is None:
                raise CalibrationFileError(f"cannot read image {str(v.image_path)!r}")
            rgb = np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2RGB), dtype=np.uint8)
            det = detect_board(rgb, views.board, views.K, views.dist)
            if det is None:
                skipped.setdefault(side, []).append(v.image_path.name)
                continue
            T_flange.append(v.T_base_flange)
            detections.append(det)
            names.append(v.image_path.name)
        try:
            solutions[side] = calibrate_arm(T_flange, detections, views.K, views.dist)
        except CalibrationError as e:
            raise CalibrationError(f"{side} arm: {e}") from e
        dropped[side] = tuple(names[i] for i in solutions[side].dropped_views)
    if anchor not in solutions:
        raise CalibrationError(f"no views of the anchor arm ({anchor}); the world frame is fixed by its mount")
    T_world_cam = np.asarray(T_world_base_anchor, dtype=float) @ solutions[anchor].T_base_cam
    arms = {side: ArmCalibration(T_world_cam @ np.linalg.inv(s.T_base_cam), s.T_base_cam, s.T_flange_board,
                                 s.n_views, s.residual_mm_mean, s.residual_mm_max, s.residual_deg_mean,
                                 s.residual_deg_max, s.reprojection_px_rms, dropped[side])
            for side, s in solutions.items()}
    calib = RigCalibration(T_world_cam, views.K, views.dist, views.width, views.height, arms, views.board, anchor)
    return calib, skipped


def save_rig_calibration(path: str | Path, calib: RigCalibration) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    arms = {}
    for side, a in calib.arms.items():
        arms[side] = {
            "T_world_base": a.T_world_base.tolist(), "T_base_cam": a.T_base_cam.tolist(),
            "T_flange_board": a.T_flange_board.tolist(), "views": a.n_views,
            "residual_mm": {"mean": round(a.residual_mm_mean, 4), "max": round(a.residual_mm_max, 4)},
            "residual_deg": {"mean": round(a.residual_deg_mean, 4), "max": round(a.residual_deg_max, 4)},
            "reprojection_px_rms": round(a.reprojection_px_rms, 4), "dropped_views": list(a.dropped_views),
        }
    data = {
        "version": FORMAT_VERSION,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "anchor": calib.anchor,
        "camera": {"K": calib.K.tolist(), "dist": calib.dist.tolist(), "width": calib.width, "height": calib.height,
                   "T_world_cam": calib.T_world_cam.tolist()},
        "arms": arms,
        "board": asdict(calib.board),
    }
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


def load_rig_calibration(path: str | Path) -> RigCalibration:
    """Load the YAML written by `mallvi calibrate`; CalibrationFileError names what is missing or wrong."""
    p = Path(path)
    data = _read_yaml(p, "rig calibration file")
    where = str(p)
    if data.get("version") != FORMAT_VERSION:
        raise CalibrationFileError(f"{where}: unsupported version {data.get('version')!r} (expected {FORMAT_VERSION})")
    cam = _get(data, "camera", where)
    arms_data = _get(data, "arms", where)
    if not isinstance(cam, dict) or not isinstance(arms_data, dict) or not arms_data:
        raise CalibrationFileError(f"{where}: 'camera' must be a mapping and 'arms' a non-empty mapping")
    arms: dict[ArmSide, ArmCalibration] = {}
    for key, a in arms_data.items():
        try:
            side = parse_arm(str(key))
        except ValueError as e:
            raise CalibrationFileError(f"{where}: arms: {e}") from e
        w = f"{where}: arms.{side}"
        if not isinstance(a, dict):
            raise CalibrationFileError(f"{w} must be a mapping")
        res_mm, res_deg = a.get("residual_mm", {}), a.get("residual_deg", {})
        arms[side] = ArmCalibration(
            T_world_base=_rigid(_get(a, "T_world_base", w), f"{w}.T_world_base"),
            T_base_cam=_rigid(_get(a, "T_base_cam", w), f"{w}.T_base_cam"),
            T_flange_board=_rigid(a.get("T_flange_board", np.eye(4).tolist()), f"{w}.T_flange_board"),
            n_views=int(a.get("views", 0)),
            residual_mm_mean=float(res_mm.get("mean", math.nan)), residual_mm_max=float(res_mm.get("max", math.nan)),
            residual_deg_mean=float(res_deg.get("mean", math.nan)),
            residual_deg_max=float(res_deg.get("max", math.nan)),
            reprojection_px_rms=float(a.get("reprojection_px_rms", math.nan)),
            dropped_views=tuple(str(n) for n in a.get("dropped_views", [])),
        )
    try:
        anchor = parse_arm(str(data.get("anchor", "left")))
    except ValueError as e:
        raise CalibrationFileError(f"{where}: anchor: {e}") from e
    return RigCalibration(
        T_world_cam=_rigid(_get(cam, "T_world_cam", where), f"{where}: camera.T_world_cam"),
        K=_matrix(_get(cam, "K", where), (3, 3), f"{where}: camera.K"),
        dist=_matrix(cam.get("dist", [0.0] * 5), (5,), f"{where}: camera.dist"),
        width=int(_get(cam, "width", where)), height=int(_get(cam, "height", where)),
        arms=arms, board=_board_from(data.get("board", {}), where), anchor=anchor,
    )


def mount_matrix(x_m: float, y_m: float, z_m: float, yaw_deg: float) -> NDArray[np.float64]:
    """An arm mount T_world_base: base origin at (x, y, z), base x axis turned ``yaw_deg`` about world z."""
    values = (x_m, y_m, z_m, yaw_deg)
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"mount values must be finite, got {values}")
    yaw = math.radians(yaw_deg)
    T = np.eye(4)
    T[:2, :2] = [[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]]
    T[:3, 3] = (x_m, y_m, z_m)
    return T


def write_view_image(folder: str | Path, side: ArmSide, index: int, rgb: NDArray[np.uint8],
                     T_base_flange: NDArray[np.float64]) -> CalibrationView:
    """Save one captured colour image (PNG) and return its view record."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{side}_{index:03d}.png"
    if not cv2.imwrite(str(path), cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)):
        raise OSError(f"cannot write {path}")
    return CalibrationView(side, path, np.asarray(T_base_flange, dtype=float))
