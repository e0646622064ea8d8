"""Configuration of one Intel RealSense camera (validated, immutable)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RealSenseConfig:
    """How to open and read a RealSense camera.

    Attributes:
        name: camera name carried by every Observation.
        serial: serial number of the device to open (None: the first one found).
        width, height, fps: colour and depth stream format.
        recording_path: play this ``.db3``/``.bag`` recording instead of opening a live device.
        timeout_s: how long read() waits for a frame pair.
        max_frame_age_s: frames stamped in host time (system/global clock) older than this are stale.
        max_depth_color_skew_ms: depth and colour timestamps further apart than this are not a pair.
        min_depth_m, max_depth_m: depth outside this range is marked invalid (0).
    """

    name: str = "realsense"
    serial: str | None = None
    width: int = 640
    height: int = 480
    fps: int = 30
    recording_path: str | None = None
    timeout_s: float = 1.0
    max_frame_age_s: float = 0.5
    max_depth_color_skew_ms: float = 40.0
    min_depth_m: float = 0.1
    max_depth_m: float = 3.0

    def __post_init__(self) -> None:
        if self.width <= 0 or self.height <= 0 or self.fps <= 0:
            raise ValueError(f"width, height and fps must be positive, got {self.width}x{self.height}@{self.fps}")
        for name in ("timeout_s", "max_frame_age_s", "max_depth_color_skew_ms", "max_depth_m"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number, got {value!r}")
        if not 0.0 <= self.min_depth_m < self.max_depth_m:
            raise ValueError(f"need 0 <= min_depth_m < max_depth_m, got {self.min_depth_m}, {self.max_depth_m}")
        if self.recording_path is not None and not Path(self.recording_path).is_file():
            raise ValueError(f"recording {self.recording_path!r} does not exist")
