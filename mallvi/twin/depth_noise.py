"""What a D435-like stereo depth sensor does to a perfect depth image: noise growing with distance, holes at depth
edges, on dark surfaces and on shiny ones. (1 mm z16 quantisation happens where the frame enters librealsense.)

The noise follows the stereo error model σ_z = z² · σ_disparity / (f_px · baseline_m): with the D435's 50 mm
baseline, a subpixel disparity error of 0.08 px and f ≈ 380 px that is ≈ 4 mm at 1 m. Shiny surfaces (metal,
glossy plastic) mirror the projector's pattern and the room instead of showing their own texture, so stereo
matching fails on them: the caller passes a per-pixel shininess (0..1, from the rendered materials; see
``twin_camera``) and pixels at or above ``shiny_level`` drop out with ``shiny_dropout``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import ndimage


@dataclass(frozen=True)
class StereoDepthModel:
    """Depth-sensor behaviour. ``edge_jump_m``: a depth step this large within 3×3 pixels leaves a hole;
    ``dark_level``: pixels whose brightest channel is below this (0..255) drop out with ``dark_dropout``;
    ``shiny_level``: pixels at least this shiny (0..1) drop out with ``shiny_dropout``."""

    baseline_m: float = 0.050
    disparity_sigma_px: float = 0.08
    edge_jump_m: float = 0.02
    edge_dilate_px: int = 1
    dark_level: int = 25
    dark_dropout: float = 0.7
    shiny_level: float = 0.5
    shiny_dropout: float = 0.8

    def sigma_m(self, depth_m: NDArray[np.float32], f_px: float) -> NDArray[np.float64]:
        """Per-pixel standard deviation of the depth error, metres."""
        z = depth_m.astype(np.float64)
        return z * z * self.disparity_sigma_px / (f_px * self.baseline_m)

    def apply(self, depth_m: NDArray[np.float32], rgb: NDArray[np.uint8], f_px: float,
              rng: np.random.Generator, shininess: NDArray[np.float32] | None = None) -> NDArray[np.float32]:
        """A sensor's depth image (metres, 0 = no depth) from a rendered one, the colour the sensor saw and, if
        known, each pixel's shininess (0 = matte, 1 = mirror)."""
        valid = depth_m > 0
        noisy = depth_m + rng.normal(size=depth_m.shape) * self.sigma_m(depth_m, f_px)
        z_max = ndimage.maximum_filter(np.where(valid, depth_m, 0.0), size=3)
        z_min = ndimage.minimum_filter(np.where(valid, depth_m, np.inf), size=3)
        edges = (z_max - z_min) > self.edge_jump_m
        if self.edge_dilate_px > 0:
            edges = ndimage.binary_dilation(edges, iterations=self.edge_dilate_px)
        dark = (rgb.max(axis=2) < self.dark_level) & (rng.random(depth_m.shape) < self.dark_dropout)
        holes = edges | dark | ~valid
        shiny = None if shininess is None else shininess >= self.shiny_level
        if shiny is not None and shiny.any():  # (a matte frame draws nothing: its noise stays as it was)
            holes |= shiny & (rng.random(depth_m.shape) < self.shiny_dropout)
        return np.where(holes, 0.0, noisy).astype(np.float32)
