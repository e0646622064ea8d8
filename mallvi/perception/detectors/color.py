"""Weight-free colour/shape detector: HSV masks, morphology, contours and shape cues.

Rejects what is not a table-top object: with depth, pixels must stand at least ``min_height_m`` above the
support plane (so the table and shadows on it are ignored) and lie no further than the table's far edge (a wall
behind it, ``background.py``); a component's 3D size must stay below ``max_size_m``, its lowest visible point
within ``max_rest_height_m`` of the table for grey, black and white (robot links, walls; a coloured one within
``max_rest_height_chromatic_m``: the top of a tower), and its points must cover an area of the table
rather than lie on one upright plane (a wall's face). Black or white components cut by the image border are
dropped (robot links entering the view); a coloured component cut by the border is kept if it is large enough,
with its score lowered and its position that of its visible part.
Shape: a smooth outline (>= 8 corners at 2 % of the perimeter, circularity >= 0.78) -> "round"; at most 6
corners at 4 % or a full minimum-area rectangle -> "block"; else the colour alone ("object"). Shape only ranks:
a query's shape word lowers the score of detections of the other shape, it does not drop them. With depth, a
"block" that is flat for its width (height / apparent width below ``cube_compactness``) ranks lower too.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.observation import Observation
from mallvi.perception.background import FarEdge, frame_behind_table, frame_far_edge, is_wall_face
from mallvi.perception.color_masks import clean, color_mask, frame_hsv
from mallvi.perception.projection import points_world, support_z, world_z_image
from mallvi.perception.query_words import COLORS, ParsedQuery, parse_query, phrase
from mallvi.perception.types import Detection

log = logging.getLogger(__name__)

ACHROMATIC = frozenset({"black", "white", "grey"})  # the colours robot links, walls and shadows take
CUT_SCORE_FACTOR = 0.8
#: a component whose raised pixels all stand this high above the table rests on something else, not on the table
LOWEST_RESTING_M = 0.02


@dataclass(frozen=True)
class ColorDetectorConfig:
    """Thresholds of the colour detector (pixels, metres)."""

    min_area_px: int = 60
    max_area_frac: float = 0.25
    min_height_m: float = 0.004
    max_size_m: float = 0.30
    open_px: int = 1
    close_px: int = 2
    grow_px: int = 4
    max_rest_height_m: float = 0.15
    #: ... and for a chromatic one (robot links are grey and black): the top block of a tower of four is 0.17 m up
    max_rest_height_chromatic_m: float = 0.35
    #: height / apparent width (sqrt of the pixel area at the object's depth) at which a "block" counts as a cube
    cube_compactness: float = 0.7
    reject_border: bool = True
    #: a chromatic component cut by the image edge is kept from this many pixels on (grey and black never are)
    min_cut_area_px: int = 400
    min_raised_frac: float = 0.5
    #: white and grey are left out by default: robot links and walls take them (pale objects standing on the
    #: table are the raised-object detector's, ``detectors/raised.py``)
    colors: tuple[str, ...] = tuple(c for c in COLORS if c not in ("white", "grey"))


def _off_the_table(comp: NDArray[np.bool_], box: tuple[int, int, int, int], z: NDArray[np.float64],
                   table_z: float, cfg: ColorDetectorConfig) -> tuple[NDArray[np.bool_], tuple[int, int, int, int]]:
    """The component without its pixels at table height when its raised part does not come down to the table
    (a block standing on another, on a table of its own colour: the grown band at the lower block's foot joins
    the upper block's component and would stretch its box down to the table). Returns the component and its box."""
    x, y, w, h = box
    zc = z[y : y + h, x : x + w]
    raised = comp & np.isfinite(zc) & (zc > table_z + cfg.min_height_m)
    if int(raised.sum()) < cfg.min_area_px or float(np.percentile(zc[raised], 2)) < table_z + LOWEST_RESTING_M:
        return comp, box
    ys, xs = np.nonzero(raised)
    y0, y1, x0, x1 = int(ys.min()), int(ys.max()) + 1, int(xs.min()), int(xs.max()) + 1
    return raised[y0:y1, x0:x1], (x + x0, y + y0, x1 - x0, y1 - y0)


def _shape(contour: NDArray[Any], area: float) -> tuple[str, float]:
    """Shape word and solidity of a contour."""
    perimeter = max(cv2.arcLength(contour, True), 1e-6)
    (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
    rectangularity = area / max(rw * rh, 1e-6)
    circularity = 4.0 * np.pi * area / perimeter**2
    hull_area = max(cv2.contourArea(cv2.convexHull(contour)), 1e-6)
    solidity = min(1.0, area / hull_area)
    fine = len(cv2.approxPolyDP(contour, 0.02 * perimeter, True))
    coarse = len(cv2.approxPolyDP(contour, 0.04 * perimeter, True))
    if fine >= 8 and circularity >= 0.78 and solidity > 0.9:
        return "round", solidity
    if coarse <= 6 and solidity > 0.6:  # a box outline has at most 6 corners (fewer when partly hidden)
        return "block", solidity
    if rectangularity >= 0.88:
        return "block", solidity
    return "object", solidity


class ColorDetector:
    """Finds coloured objects; queries select colours and shapes ("red block", "the blue cube", "green")."""

    name = "color"

    def __init__(self, config: ColorDetectorConfig | None = None) -> None:
        self.config = config or ColorDetectorConfig()

    def detect(self, obs: Observation, queries: list[str]) -> list[Detection]:
        cfg = self.config
        parsed = [parse_query(q) for q in queries]
        # colours a query names are searched even when off by default (asking for "white block" looks for white)
        named = {p.color for p in parsed if p.color}
        wanted = named if parsed and all(p.color for p in parsed) else set(cfg.colors) | named
        hsv = frame_hsv(obs)
        z = world_z_image(obs)
        table_z = support_z(obs) if z is not None else None
        above: NDArray[np.bool_] | None = None
        allowed = np.ones(obs.depth_m.shape, dtype=bool)
        edge = frame_far_edge(obs)
        if z is not None and table_z is not None:
            above = ((z > table_z + cfg.min_height_m) | (obs.depth_m <= 0)) & ~frame_behind_table(obs)
            # keep the lowest rows of side faces too: pixels a few px from a raised pixel
            grow = 2 * cfg.grow_px + 1
            allowed = cv2.dilate(above.astype(np.uint8), np.ones((grow, grow), np.uint8)).astype(bool)
        max_area = cfg.max_area_frac * obs.height * obs.width
        out: list[Detection] = []
        for color in [c for c in COLORS if c in wanted]:
            mask = clean(color_mask(hsv, color) & allowed, cfg.open_px, cfg.close_px)
            n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
            for i in range(1, n):
                area = float(stats[i, cv2.CC_STAT_AREA])
                if area < cfg.min_area_px or area > max_area:
                    continue
                x, y, w, h = (int(stats[i, k]) for k in range(4))
                comp = labels[y : y + h, x : x + w] == i  # the component inside its box
                if z is not None and table_z is not None:
                    comp, (x, y, w, h) = _off_the_table(comp, (x, y, w, h), z, table_z, cfg)
                    area = float(comp.sum())
                    if area < cfg.min_area_px:
                        continue
                box_above = above[y : y + h, x : x + w][comp] if above is not None else None
                if box_above is not None and float(box_above.mean()) < cfg.min_raised_frac:
                    continue  # lies on the table: a shadow or a patch of table
                cut = x <= 0 or y <= 0 or x + w >= obs.width or y + h >= obs.height
                if cut and cfg.reject_border and (color in ACHROMATIC or area < cfg.min_cut_area_px):
                    continue  # cut by the image edge: robot links, or too little of an object to localise
                compact: float | None = None
                if z is not None:
                    plausible, compact = self._measure(comp, (x, y, w, h), area, obs, z, table_z, edge,
                                                       chromatic=color not in ACHROMATIC)
                    if not plausible:
                        continue
                contours, _ = cv2.findContours(comp.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE,
                                               offset=(x, y))
                contour = max(contours, key=cv2.contourArea)
                shape, solidity = _shape(contour, area)
                score = 0.97 * float(np.clip((solidity - 0.5) / 0.45, 0.0, 1.0)) ** 0.5
                score *= 1.0 - float(np.exp(-area / (3.0 * cfg.min_area_px)))
                if cut:  # a coloured object partly out of view: kept, ranked lower, centred on its visible part
                    score *= CUT_SCORE_FACTOR
                if shape == "block" and compact is not None:
                    # table-top blocks are cubes: flat boxes (sponges, erasers, pads) rank below them
                    score *= float(np.clip(compact / cfg.cube_compactness, 0.5, 1.0))
                det = Detection(
                    box_xyxy=(x, y, x + w, y + h), score=round(score, 4), label=phrase(color, shape),
                    source=self.name, color=color, scores={self.name: score},
                )
                matched = _match(det, shape, parsed)
                if matched is not None:
                    out.append(_with_query(det, *matched))
        out.sort(key=lambda d: -d.score)
        log.debug("color detector: %d detections for %s", len(out), queries)
        return out

    def _measure(self, comp: NDArray[np.bool_], box: tuple[int, int, int, int], area_px: float, obs: Observation,
                 z: NDArray[np.float64], table_z: float | None,
                 edge: FarEdge | None = None, chromatic: bool = False) -> tuple[bool, float | None]:
        """Whether the component can be a table-top object, and its compactness (height / apparent width)."""
        x, y, w, h = box
        local = comp & (obs.depth_m[y : y + h, x : x + w] > 0)
        zs = z[y : y + h, x : x + w][local]
        if zs.size < 5:
            return True, None
        lo, hi = np.percentile(zs, [2, 98])
        if hi - lo > self.config.max_size_m:
            return False, None
        rest_max = self.config.max_rest_height_chromatic_m if chromatic else self.config.max_rest_height_m
        if table_z is not None and lo - table_z > rest_max:
            return False, None  # floats high above the table: a robot link, not a table-top object
        whole = np.zeros(obs.depth_m.shape, dtype=bool)
        whole[y : y + h, x : x + w] = local
        if is_wall_face(points_world(whole, obs), edge):
            return False, None  # the face of a wall at the table's far edge: no footprint on it
        d = float(np.median(obs.depth_m[y : y + h, x : x + w][local]))
        px_to_m = d / float(obs.K[0, 0])
        if float(np.hypot(w, h)) * px_to_m > self.config.max_size_m * 1.5:  # footprint from the box diagonal
            return False, None
        height_m = hi - (min(lo, table_z) if table_z is not None else lo)
        return True, float(height_m / max(np.sqrt(area_px) * px_to_m, 1e-6))


#: score factor for a detection whose shape cue disagrees with the query ("red ball" answered by a red block):
#: shape cues from a silhouette are weak (a tilted cube can look round), so they rank, they do not filter
SHAPE_MISMATCH_FACTOR = 0.6


def _match(det: Detection, shape: str, parsed: list[ParsedQuery]) -> tuple[ParsedQuery | None, float] | None:
    """(query answered or None without queries, score factor), or None when no query's colour fits."""
    if not parsed:
        return None, 1.0
    fallback = None
    for p in parsed:
        if p.color is not None and p.color != det.color:
            continue
        if p.label in ("block", "round") and shape in ("block", "round") and p.label != shape:
            fallback = fallback or p
            continue
        return p, 1.0
    return (fallback, SHAPE_MISMATCH_FACTOR) if fallback is not None else None


def _with_query(det: Detection, p: ParsedQuery | None, factor: float) -> Detection:
    if p is None and factor == 1.0:
        return det
    score = det.score * factor
    return Detection(det.box_xyxy, round(score, 4), det.label, det.source, det.color, {det.source: score},
                     query=p.text if p is not None else None)
