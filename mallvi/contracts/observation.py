"""The camera observation every part of mallvi exchanges (simulator and real cameras alike).

Frames and units:
- ``T_world_cam`` maps points from the camera's *OpenCV* optical frame (x right, y down, z forward) to the
  world frame (+x robot's right, +y away from the robot, +z up). Metres.
- ``K`` is the 3×3 pinhole intrinsic matrix in the same OpenCV convention (pixels).
- ``depth_m`` is the z-depth along the optical axis in metres; 0 marks an invalid pixel.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray


class ObservationError(ValueError):
    """An observation whose arrays do not fit the contract."""


@dataclass(frozen=True)
class Observation:
    """One RGB-D frame with its calibration.

    Attributes:
        rgb: uint8 image, H×W×3.
        depth_m: float32 depth in metres, H×W, 0 = invalid.
        K: 3×3 intrinsics (OpenCV convention).
        T_world_cam: 4×4 pose of the OpenCV camera frame in the world frame.
        camera: camera name ("head", "front", "left_wrist", "realsense", ...).
        stamp: capture time in seconds (simulated time in sim, host monotonic time on a real camera).
        seg: optional int32 H×W object-id image (simulator only); 0 = background.
        seg_names: object id -> object name for ``seg``.
        seg_points: object name -> its model's named points (contact, functional and part points) in the world
            frame at capture time, as ``[x, y, z, qw, qx, qy, qz]`` (simulator only: privileged, like ``seg``).
    """

    rgb: NDArray[np.uint8]
    depth_m: NDArray[np.float32]
    K: NDArray[np.float64]
    T_world_cam: NDArray[np.float64]
    camera: str
    stamp: float
    seg: NDArray[np.int32] | None = None
    seg_names: Mapping[int, str] = field(default_factory=dict)
    seg_points: Mapping[str, Mapping[str, tuple[float, ...]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.rgb.ndim != 3 or self.rgb.shape[2] != 3 or self.rgb.dtype != np.uint8:
            raise ObservationError(f"rgb must be uint8 HxWx3, got {self.rgb.dtype} {self.rgb.shape}")
        h, w = self.rgb.shape[:2]
        if self.depth_m.shape != (h, w):
            raise ObservationError(f"depth_m must be {h}x{w}, got {self.depth_m.shape}")
        if self.depth_m.dtype != np.float32:
            raise ObservationError(f"depth_m must be float32, got {self.depth_m.dtype}")
        if self.K.shape != (3, 3):
            raise ObservationError(f"K must be 3x3, got {self.K.shape}")
        if self.T_world_cam.shape != (4, 4):
            raise ObservationError(f"T_world_cam must be 4x4, got {self.T_world_cam.shape}")
        if not (np.all(np.isfinite(self.K)) and np.all(np.isfinite(self.T_world_cam))):
            raise ObservationError("K and T_world_cam must be finite")
        if self.seg is not None and self.seg.shape != (h, w):
            raise ObservationError(f"seg must be {h}x{w}, got {self.seg.shape}")

    @property
    def height(self) -> int:
        return int(self.rgb.shape[0])

    @property
    def width(self) -> int:
        return int(self.rgb.shape[1])

    def mask_of(self, name: str) -> NDArray[np.bool_] | None:
        """The simulator mask of the object called ``name``; None without segmentation or if not visible."""
        if self.seg is None:
            return None
        ids = [i for i, n in self.seg_names.items() if n == name]
        if not ids:
            return None
        mask = np.isin(self.seg, ids)
        return mask if bool(mask.any()) else None
