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
import hashlib
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
from mallvi.robot_drivers.calibration.calibration_yaml import CalibrationFileError, Fields, read_mapping
from mallvi.robot_drivers.calibration.eye_to_hand import (
    BoardDetection,
    BoardSpec,
    CalibrationError,
    calibrate_arm,
    detect_board,
)
from mallvi.robot_drivers.calibration.plausibility import ArmLayout, check_intrinsics, check_mounts

log = logging.getLogger(__name__)

VIEWS_FILE = "views.yaml"
FORMAT_VERSION = 1
#: image sizes a camera delivers (pixels)
MAX_IMAGE_PX = 16384
#: how far a world-frame transform (a mount, the camera) may put its origin (metres)
MAX_WORLD_M = 10.0
#: how far the camera may be from an arm's base, and the board from the flange (metres)
MAX_BASE_CAM_M = 5.0
MAX_FLANGE_BOARD_M = 1.0
#: a flange pose the arm reports lies within its reach (a Piper reaches 0.63 m)
MAX_BASE_FLANGE_M = 2.0


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


def _board_from(fields: Fields) -> BoardSpec:
    unknown = sorted(set(fields.data) - {"squares_x", "squares_y", "square_m", "marker_m", "dictionary"})
    if unknown:
        raise fields.error(unknown[0], "is not a board setting (squares_x, squares_y, square_m, marker_m, dictionary)")
    default = BoardSpec()
    try:
        return BoardSpec(squares_x=fields.integer("squares_x", 2, 100, default=default.squares_x),
                         squares_y=fields.integer("squares_y", 2, 100, default=default.squares_y),
                         square_m=fields.number("square_m", 1e-3, 1.0, default=default.square_m),
                         marker_m=fields.number("marker_m", 1e-3, 1.0, default=default.marker_m),
                         dictionary=fields.text("dictionary", default=default.dictionary, max_len=40))
    except ValueError as e:
        if isinstance(e, CalibrationFileError):
            raise
        raise CalibrationFileError(f"{fields.file}: {fields.path or 'board'}: {e}") from e


def _camera(fields: Fields) -> tuple[NDArray[np.float64], NDArray[np.float64], int, int]:
    """K, dist, width and height of a file's ``camera`` mapping, checked for plausibility."""
    K = fields.matrix("K", (3, 3))
    dist = fields.matrix("dist", (5,), bound=1e3, default=[0.0] * 5)
    width = fields.integer("width", 1, MAX_IMAGE_PX)
    height = fields.integer("height", 1, MAX_IMAGE_PX)
    check_intrinsics(K, width, height, fields.file)
    return K, dist, width, height


def _view_image(root: Path, fields: Fields, key: str) -> Path:
    """The image a view names, which must lie inside the views folder ``root``."""
    name = fields.text(key, max_len=1000)
    image = root / name
    try:
        inside = image.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError, ValueError) as e:  # ValueError: a NUL byte in the name
        raise fields.error(key, f"names {name!r}, which cannot be resolved: {e}") from e
    if Path(name).is_absolute() or not inside:
        raise fields.error(key, f"names {name!r}, which lies outside the views folder {str(root)!r}; a view's image "
                                "is a file in that folder")
    if not image.is_file():
        raise fields.error(key, f"names the image {str(image)!r}, which is not found")
    return image


def load_views(folder: str | Path) -> CalibrationViews:
    """Read a views folder written by `mallvi calibrate` (or by hand); raises CalibrationFileError naming the file
    and the key."""
    root = Path(folder)
    if not root.is_dir():
        raise CalibrationFileError(f"views folder {str(root)!r} does not exist")
    path = root / VIEWS_FILE
    top = Fields(read_mapping(path, "views file"), str(path))
    cam = top.mapping("camera")
    views = []
    for i, v in enumerate(top.sequence("views")):
        if not isinstance(v, dict):
            raise top.error(f"views[{i}]", f"must be a mapping, got {type(v).__name__}")
        view = Fields(v, top.file, f"views[{i}]")
        arm = _arm(view, "arm")
        image = _view_image(root, view, "image")
        views.append(CalibrationView(arm, image, view.rigid("T_base_flange", max_translation_m=MAX_BASE_FLANGE_M)))
    K, dist, width, height = _camera(cam)
    return CalibrationViews(board=_board_from(top.mapping("board")), K=K, dist=dist, width=width, height=height,
                            views=views)


def _arm(fields: Fields, key: str) -> ArmSide:
    try:
        return parse_arm(fields.text(key, max_len=20))
    except CalibrationFileError:
        raise
    except ValueError as e:
        raise CalibrationFileError(f"{fields.file}: {fields.key(key)}: {e}") from e


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
            views_file = v.image_path.parent / VIEWS_FILE
            if image is None:
                raise CalibrationFileError(f"{views_file}: the image {v.image_path.name!r} is not an image that can "
                                           "be read (PNG or JPEG)")
            if image.shape[:2] != (views.height, views.width):
                raise CalibrationFileError(f"{views_file}: the image {v.image_path.name!r} is {image.shape[1]}x"
                                           f"{image.shape[0]} pixels, but camera.width and camera.height say "
                                           f"{views.width}x{views.height}")
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
    """Load the YAML written by `mallvi calibrate`, bounded and typed (``calibration_yaml``), and refuse a
    calibration no rig has (``plausibility``); CalibrationFileError names the file and the key."""
    p = Path(path)
    top = Fields(read_mapping(p, "rig calibration file"), str(p))
    version = top.data.get("version")
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise top.error("version", f"is an unsupported version: {str(version)[:20]!r} (expected {FORMAT_VERSION})")
    cam = top.mapping("camera")
    arms_data = top.mapping("arms")
    if not arms_data.data:
        raise top.error("arms", "must name at least one arm")
    arms: dict[ArmSide, ArmCalibration] = {}
    for key in arms_data.data:
        try:
            side = parse_arm(str(key)[:20])
        except ValueError as e:
            raise CalibrationFileError(f"{top.file}: arms: {e}") from e
        arms[side] = _arm_calibration(arms_data.mapping(str(key)))
    anchor = _arm(top, "anchor") if top.has("anchor") else "left"
    K, dist, width, height = _camera(cam)
    T_world_cam = cam.rigid("T_world_cam", max_translation_m=MAX_WORLD_M)
    check_mounts({s: a.T_world_base for s, a in arms.items()}, T_world_cam, top.file)
    return RigCalibration(T_world_cam=T_world_cam, K=K, dist=dist, width=width, height=height, arms=arms,
                          board=_board_from(top.mapping("board", required=False)), anchor=anchor)


def _arm_calibration(a: Fields) -> ArmCalibration:
    res_mm, res_deg = a.mapping("residual_mm", required=False), a.mapping("residual_deg", required=False)
    return ArmCalibration(
        T_world_base=a.rigid("T_world_base", max_translation_m=MAX_WORLD_M),
        T_base_cam=a.rigid("T_base_cam", max_translation_m=MAX_BASE_CAM_M),
        T_flange_board=a.rigid("T_flange_board", max_translation_m=MAX_FLANGE_BOARD_M, default=np.eye(4).tolist()),
        n_views=a.integer("views", 0, 100_000, default=0),
        residual_mm_mean=res_mm.number("mean", 0.0, 1e6, default=math.nan, allow_nan=True),
        residual_mm_max=res_mm.number("max", 0.0, 1e6, default=math.nan, allow_nan=True),
        residual_deg_mean=res_deg.number("mean", 0.0, 360.0, default=math.nan, allow_nan=True),
        residual_deg_max=res_deg.number("max", 0.0, 360.0, default=math.nan, allow_nan=True),
        reprojection_px_rms=a.number("reprojection_px_rms", 0.0, 1e6, default=math.nan, allow_nan=True),
        dropped_views=a.texts("dropped_views"),
    )


def calibrated_layout(calib: RigCalibration, name: str) -> ArmLayout:
    """The arm layout a calibration was made for (its mounts), called ``name`` in messages."""
    return ArmLayout({s: a.T_world_base for s, a in calib.arms.items()}, name)


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a calibration file's bytes (what a benchmark run's identity and a resumed run compare);
    OSError when ``path`` is not a regular file (a FIFO would never end)."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path} is not a regular file")
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


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
