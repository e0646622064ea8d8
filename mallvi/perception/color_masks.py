"""HSV colour masks for named colours (OpenCV hue 0..179; red wraps around 0).

Thresholds are chosen for saturated toy-block colours under varying light: chromatic colours need a minimum
saturation and a value above 105; black is any pixel with V <= 105 whatever its tint (dark blocks keep a
faint, random hue); white is low saturation and high value, grey low saturation between black and white. A
per-image value normalisation (scaling so that the 99th percentile of V is 255) makes the masks tolerant to
exposure changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.observation import Observation
from mallvi.perception.frame_memo import per_frame
from mallvi.perception.query_words import COLORS

BLACK_V_MAX = 105


@dataclass(frozen=True)
class HsvRange:
    """Hue intervals (inclusive, OpenCV units) plus saturation/value bounds."""

    hues: tuple[tuple[int, int], ...]
    s_min: int = 90
    s_max: int = 255
    v_min: int = 50
    v_max: int = 255


HSV_RANGES: dict[str, HsvRange] = {
    "red": HsvRange(hues=((0, 7), (168, 179)), v_min=60),
    "orange": HsvRange(hues=((8, 22),), s_min=150, v_min=120),
    "yellow": HsvRange(hues=((23, 34),), s_min=110, v_min=110),
    "green": HsvRange(hues=((38, 83),), s_min=80, v_min=60),
    # cyan between them: a cyan object under a tinted light (the benchmark's random light colours) sits at hue
    # 87-95, and read as green or blue it made "the green block" or "the blue pad" ambiguous
    "cyan": HsvRange(hues=((84, 98),), s_min=90, v_min=60),
    "blue": HsvRange(hues=((99, 130),), s_min=90, v_min=60),
    "purple": HsvRange(hues=((131, 152),), s_min=70, v_min=60),
    "pink": HsvRange(hues=((153, 167),), s_min=60, v_min=120),
    # black: V <= BLACK_V_MAX whatever the tint (see _black); chromatic colours exclude those pixels
    "black": HsvRange(hues=((0, 179),), s_min=0, s_max=255, v_min=0, v_max=105),
    "white": HsvRange(hues=((0, 179),), s_min=0, s_max=40, v_min=200, v_max=255),
    "grey": HsvRange(hues=((0, 179),), s_min=0, s_max=40, v_min=BLACK_V_MAX + 1, v_max=199),
}


@per_frame
def frame_hsv(obs: Observation) -> NDArray[np.uint8]:
    """``to_hsv`` of the frame's RGB image, once per frame (the result is shared: do not modify it)."""
    return to_hsv(obs.rgb)


def to_hsv(rgb: NDArray[np.uint8], normalise: bool = True) -> NDArray[np.uint8]:
    """HSV of an RGB image, with V stretched so its 99th percentile is 255 (exposure tolerance)."""
    hsv: NDArray[np.uint8] = np.asarray(cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV), dtype=np.uint8)
    if normalise:
        p99 = float(np.percentile(hsv[..., 2], 99))
        if 40.0 < p99 < 250.0:
            v = np.clip(hsv[..., 2].astype(np.float32) * (255.0 / p99), 0, 255).astype(np.uint8)
            hsv = hsv.copy()
            hsv[..., 2] = v
    return hsv


def _black(s: NDArray[np.uint8], v: NDArray[np.uint8]) -> NDArray[np.bool_]:
    return np.asarray(v <= BLACK_V_MAX, dtype=bool)


def color_mask(hsv: NDArray[np.uint8], color: str) -> NDArray[np.bool_]:
    """Pixels of ``hsv`` (an H×W×3 image or N×3 pixels) that have the named colour."""
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    if color == "black":
        return _black(s, v)
    r = HSV_RANGES[color]
    if hsv.dtype == np.uint8 and hsv.ndim in (2, 3) and hsv.shape[-1] == 3:
        # the same test in one pass per hue interval: inclusive bounds on H, S and V, and V above BLACK_V_MAX
        # (not black) folded into V's lower bound
        img = np.ascontiguousarray(hsv).reshape(-1, 1, 3) if hsv.ndim == 2 else np.ascontiguousarray(hsv)
        v_min = max(r.v_min, BLACK_V_MAX + 1)
        out = np.zeros(img.shape[:2], dtype=bool)
        for lo, hi in r.hues:
            lower = np.array([lo, r.s_min, v_min], dtype=np.uint8)
            upper = np.array([hi, r.s_max, r.v_max], dtype=np.uint8)
            out |= np.asarray(cv2.inRange(img, lower, upper)) > 0
        return out.reshape(hsv.shape[:-1])
    sv = (s >= r.s_min) & (s <= r.s_max) & (v >= r.v_min) & (v <= r.v_max)
    hue = np.zeros(h.shape, dtype=bool)
    for lo, hi in r.hues:
        hue |= (h >= lo) & (h <= hi)
    return np.asarray(sv & hue & ~_black(s, v), dtype=bool)


def clean(mask: NDArray[np.bool_], open_px: int = 1, close_px: int = 2) -> NDArray[np.bool_]:
    """Morphological opening (drops speckle) then closing (fills seams between faces)."""
    m: NDArray[Any] = mask.astype(np.uint8)
    if open_px > 0:
        m = cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((2 * open_px + 1,) * 2, np.uint8))
    if close_px > 0:
        m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, np.ones((2 * close_px + 1,) * 2, np.uint8))
    return m.astype(bool)


def dominant_color(rgb: NDArray[np.uint8], mask: NDArray[np.bool_], hsv: NDArray[np.uint8] | None = None) -> str | None:
    """The colour word covering most of the mask's pixels (at least 30 %), or None.

    ``hsv`` is ``to_hsv(rgb)`` when the caller has it already; only the mask's pixels are classified.
    """
    if not mask.any():
        return None
    pixels = (to_hsv(rgb) if hsv is None else hsv)[mask]  # (n, 3): color_mask works on any leading shape
    best, best_frac = None, 0.3
    total = float(len(pixels))
    for c in COLORS:
        frac = float(color_mask(pixels, c).sum()) / total
        if frac > best_frac:
            best, best_frac = c, frac
    return best
