"""Objects standing on the table, found from the depth cloud rather than from colour.

Colour masks find saturated objects; pale ones (white, beige or grey bowls, bottles, a bar) look like the table to
them. Here depth decides what is an object: pixels with valid depth standing at least ``min_height_m`` above the
support plane (``projection.support_z``), minus the pixels the colour masks already claim, grouped into connected
regions (a depth sensor leaves no depth at steps between objects, which separates them; a step inside one object,
such as a bowl's near rim in front of its inside, splits it, so regions whose footprints on the table overlap and
whose heights meet are joined again). A region entering from the image's near side is first cut where its points
leave a gap on the table: there the robot's bases stand, and an object just beyond one touches it in the image.
Regions that float above the table (robot links), are too large or touch the image border are left out, except a
large region cut by the left, right or top edge (an object partly out of view; its position is that
of its visible part). The bottom edge is the near side, where the robot's own bases and arms enter the view.
Each region is named by colour (white, grey, ...) and by a shape cue from its points: a bowl is lower in its middle
than at its rim, a bottle stands taller than it is wide.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.observation import Observation
from mallvi.perception.background import frame_behind_table, frame_far_edge, is_wall_face
from mallvi.perception.color_masks import clean, color_mask, dominant_color, frame_hsv
from mallvi.perception.frame_memo import per_frame
from mallvi.perception.projection import points_world, support_z, world_z_image


@dataclass(frozen=True)
class RaisedConfig:
    """Thresholds (metres, pixels) of the raised-region search."""

    min_height_m: float = 0.008
    min_area_px: int = 120
    max_size_m: float = 0.30
    #: the lowest visible point must be this close to the table (robot links hang above it)
    max_rest_height_m: float = 0.04
    #: colours whose pixels are left to the colour detector
    colour_claimed: tuple[str, ...] = ("red", "orange", "yellow", "green", "blue", "purple", "pink", "black")
    #: two regions whose table footprints overlap by this fraction of the smaller one are one object
    merge_overlap: float = 0.5
    border_px: int = 2
    #: a region cut by the left, right or top image edge is kept from this many pixels on
    min_cut_area_px: int = 1500
    #: ... and their heights meet within this (a robot link above an object is not part of it)
    merge_gap_m: float = 0.02
    #: cell of the table grid on which a region entering from the near side is cut into footprints (metres)
    near_split_cell_m: float = 0.005
    #: ... and, where its footprint has no gap, cells with points this far above the table are the robot's base
    near_base_height_m: float = 0.12


@dataclass(frozen=True)
class RaisedRegion:
    """One object found from depth: its pixels, box, colour word (or None) and shape word."""

    mask: NDArray[np.bool_]
    box_xyxy: tuple[int, int, int, int]
    color: str | None
    shape: str
    height_m: float
    cut: bool = False  # touches the image edge: only part of the object is seen


def _footprint_box(pts: NDArray[np.float64]) -> NDArray[np.float64]:
    lo_hi: NDArray[np.float64] = np.percentile(pts[:, :2], [2, 98], axis=0)  # one partition for both
    return lo_hi.reshape(-1)


def _overlap(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """Intersection of two xy boxes over the smaller one's area."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return float(w * h / max(smaller, 1e-9))


def _heights_meet(a: NDArray[np.float64], b: NDArray[np.float64], gap_m: float) -> bool:
    """Whether two point sets' height ranges (2nd to 98th percentile) overlap or lie within ``gap_m``."""
    lo_a, hi_a = np.percentile(a[:, 2], [2, 98])
    lo_b, hi_b = np.percentile(b[:, 2], [2, 98])
    return bool(lo_b <= hi_a + gap_m and lo_a <= hi_b + gap_m)


def shape_of(pts: NDArray[np.float64], table_z: float) -> str:
    """"bowl" (its middle lower than its rim, or empty: a floor too low to count as raised), "bottle" (taller
    than wide) or "object", from an object's points."""
    xy = pts[:, :2].astype(np.float32)
    (cx, cy), (a, b), _ = cv2.minAreaRect(xy)
    length, width = max(a, b), min(a, b)
    height = float(np.percentile(pts[:, 2], 98)) - table_z
    r = np.hypot(pts[:, 0] - cx, pts[:, 1] - cy)
    inner = pts[r < 0.3 * width / 2, 2]
    outer = pts[r > 0.7 * width / 2, 2]
    if length < 1.5 * width and outer.size >= 20:
        if inner.size < max(5, 0.01 * outer.size):
            return "bowl"  # a ring of wall around a floor at table height
        if float(np.percentile(outer, 90)) - float(np.median(inner)) > max(0.01, 0.3 * height):
            return "bowl"
    if height > 1.3 * length:
        return "bottle"
    return "object"


def _split_off_near_side(mask: NDArray[np.bool_], obs: Observation, cfg: RaisedConfig,
                         table_z: float) -> list[NDArray[np.bool_]]:
    """A region entering from the image's near side cut where its points leave a gap on the table.

    The robot's bases enter the view from the bottom edge; an object standing just beyond one touches it in the
    image (the base hides the gap between them) but not on the table. The region's points are binned on a table
    grid of ``near_split_cell_m``; cells joined through a neighbour are one footprint, and each footprint's pixels
    become their own region (those still touching the near side are then left out as before). Where the
    footprint has no gap (a bowl standing against a base), the cells holding points more than
    ``near_base_height_m`` above the table are the base's and are cut out first.
    """
    vs, us = np.nonzero(mask & (obs.depth_m > 0) & np.isfinite(obs.depth_m))
    if vs.size == 0:
        return [mask]
    single = np.zeros(mask.shape, dtype=bool)
    single[vs, us] = True
    pts = points_world(single, obs)  # row-major order of the pixels, as np.nonzero returns them
    cell = cfg.near_split_cell_m
    ij = np.floor((pts[:, :2] - pts[:, :2].min(axis=0)) / cell).astype(int)
    grid = np.zeros((int(ij[:, 0].max()) + 1, int(ij[:, 1].max()) + 1), dtype=np.uint8)
    grid[ij[:, 0], ij[:, 1]] = 1
    n, cells = cv2.connectedComponents(grid, connectivity=8)
    if n <= 2:
        # no gap (an object standing against a base): the base's cells, taller than any object it hides part
        # of, are cut out; what stays apart from them is its own footprint
        tall = np.zeros(grid.shape, dtype=bool)
        np.logical_or.at(tall, (ij[:, 0], ij[:, 1]), pts[:, 2] > table_z + cfg.near_base_height_m)
        n, cells = cv2.connectedComponents((grid.astype(bool) & ~tall).astype(np.uint8), connectivity=8)
        if n < 2 or not tall.any():
            return [mask]
        cells[tall] = n  # the base's own cells: one more piece
        n += 1
    label = cells[ij[:, 0], ij[:, 1]]
    pieces = []
    for k in range(1, n):
        piece = np.zeros(mask.shape, dtype=bool)
        piece[vs[label == k], us[label == k]] = True
        pieces.append(piece)
    return pieces


@per_frame
def raised_regions(obs: Observation, config: RaisedConfig | None = None) -> list[RaisedRegion]:
    """The objects standing on the support plane that colour does not claim; [] without depth."""
    cfg = config or RaisedConfig()
    z = world_z_image(obs)
    table_z = support_z(obs) if z is not None else None
    if z is None or table_z is None:
        return []
    hsv = frame_hsv(obs)
    claimed = np.zeros(obs.depth_m.shape, dtype=bool)
    for c in cfg.colour_claimed:
        claimed |= color_mask(hsv, c)
    raised = (obs.depth_m > 0) & (z > table_z + cfg.min_height_m) & ~clean(claimed, 1, 2)
    edge = frame_far_edge(obs)
    raised &= ~frame_behind_table(obs)
    raised = clean(raised, 1, 0)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(raised.astype(np.uint8), connectivity=8)
    parts: list[tuple[NDArray[np.bool_], NDArray[np.float64], NDArray[np.float64]]] = []
    for i in range(1, n):
        if stats[i, cv2.CC_STAT_AREA] < 20:
            continue
        bx, by, bw, bh = (int(stats[i, k]) for k in range(4))
        mask = np.zeros(labels.shape, dtype=bool)
        mask[by : by + bh, bx : bx + bw] = labels[by : by + bh, bx : bx + bw] == i  # the component is in its box
        pieces = _split_off_near_side(mask, obs, cfg, table_z) if by + bh > labels.shape[0] - cfg.border_px else [mask]
        for piece in pieces:
            pts = points_world(piece, obs)
            if pts.shape[0]:
                parts.append((piece, pts, _footprint_box(pts)))
    # join pieces of one object (split by a depth step inside it): overlapping footprints on the table
    joined = True
    while joined:
        joined = False
        for i in range(len(parts)):
            for j in range(i + 1, len(parts)):
                if (_overlap(parts[i][2], parts[j][2]) >= cfg.merge_overlap
                        and _heights_meet(parts[i][1], parts[j][1], cfg.merge_gap_m)):
                    mask = parts[i][0] | parts[j][0]
                    pts = np.concatenate([parts[i][1], parts[j][1]])
                    parts[i] = (mask, pts, _footprint_box(pts))
                    del parts[j]
                    joined = True
                    break
            if joined:
                break
    h, w = obs.depth_m.shape
    out: list[RaisedRegion] = []
    for mask, pts, foot in parts:
        if int(mask.sum()) < cfg.min_area_px:
            continue
        ys, xs = np.nonzero(mask)
        x0, y0, x1, y1 = int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1
        b = cfg.border_px
        if y1 > h - b:
            continue  # enters from the near side: the robot's own bases and arms
        cut = x0 < b or y0 < b or x1 > w - b
        if cut and int(mask.sum()) < cfg.min_cut_area_px:
            continue  # cut by the image edge: too little of an object to localise
        lo_z, hi_z = np.percentile(pts[:, 2], [2, 98])
        if lo_z - table_z > cfg.max_rest_height_m:
            continue  # hangs above the table: a robot link
        if is_wall_face(pts, edge):
            continue  # the face of a wall at the table's far edge
        if max(foot[2] - foot[0], foot[3] - foot[1], hi_z - table_z) > cfg.max_size_m:
            continue
        out.append(RaisedRegion(mask, (x0, y0, x1, y1), dominant_color(obs.rgb, mask, hsv), shape_of(pts, table_z),
                                float(hi_z - table_z), cut))
    return out
