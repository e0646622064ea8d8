"""Segmenters: a detection box in, the object's boolean mask out (None when nothing is found).

- SimMaskSegmenter: the simulator's segmentation (privileged).
- ColorMaskSegmenter: the detection's colour inside its (slightly grown) box, largest component; for pale or
  uncoloured detections the raised region from depth that fits the box (``RaisedMaskSegmenter``) first, then
  (no colour) GrabCut.
- RaisedMaskSegmenter: the object region found from depth (``perception/raised_regions.py``) that best fits the box.
- BoxGrabCutSegmenter: OpenCV GrabCut initialised from the box.
- SamSegmenter: SAM with a box prompt, in mallvi.perception.neural.sam (it needs torch; it builds on this module).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import cv2
import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.observation import Observation
from mallvi.perception.color_masks import clean, color_mask, frame_hsv
from mallvi.perception.raised_regions import RaisedConfig, raised_regions
from mallvi.perception.types import Detection, box_iou

Mask = NDArray[np.bool_]


@runtime_checkable
class Segmenter(Protocol):
    """Turns a detection into a mask of the whole image."""

    name: str

    def segment(self, obs: Observation, detection: Detection) -> Mask | None: ...


def box_slices(box_xyxy: tuple[float, float, float, float], shape: tuple[int, ...], grow_px: int = 0
               ) -> tuple[slice, slice]:
    """Row and column slices of a box grown by ``grow_px`` and clipped to the image."""
    h, w = shape[:2]
    x0 = max(0, int(np.floor(box_xyxy[0])) - grow_px)
    y0 = max(0, int(np.floor(box_xyxy[1])) - grow_px)
    x1 = min(w, int(np.ceil(box_xyxy[2])) + grow_px)
    y1 = min(h, int(np.ceil(box_xyxy[3])) + grow_px)
    return slice(y0, y1), slice(x0, x1)


def largest_component(mask: Mask) -> Mask | None:
    """The largest 8-connected component of ``mask``; None if empty."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    if n <= 1:
        return None
    k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return np.asarray(labels == k, dtype=bool)


class SimMaskSegmenter:
    """The simulator mask of the detection's instance, or of the object id covering most of the box."""

    name = "sim"

    def segment(self, obs: Observation, detection: Detection) -> Mask | None:
        if obs.seg is None:
            return None
        if detection.instance is not None:
            mask = obs.mask_of(detection.instance)
            if mask is not None:
                return mask
        rows, cols = box_slices(detection.box_xyxy, obs.seg.shape)
        ids, counts = np.unique(obs.seg[rows, cols], return_counts=True)
        best, best_count = None, 0
        for i, c in zip(ids.tolist(), counts.tolist(), strict=True):
            if i != 0 and i in obs.seg_names and c > best_count:
                best, best_count = i, c
        if best is None:
            return None
        return np.asarray(obs.seg == best, dtype=bool)


class BoxGrabCutSegmenter:
    """GrabCut initialised with the detection box (background = everything outside it)."""

    name = "grabcut"

    def __init__(self, iterations: int = 3, margin_px: int = 8) -> None:
        self.iterations = iterations
        self.margin_px = margin_px

    def segment(self, obs: Observation, detection: Detection) -> Mask | None:
        rows, cols = box_slices(detection.box_xyxy, obs.rgb.shape, self.margin_px)
        crop = np.ascontiguousarray(obs.rgb[rows, cols][:, :, ::-1])
        if crop.shape[0] < 4 or crop.shape[1] < 4:
            return None
        gc_mask = np.zeros(crop.shape[:2], np.uint8)
        r_rows, r_cols = box_slices(detection.box_xyxy, obs.rgb.shape)
        rect = (r_cols.start - cols.start, r_rows.start - rows.start,
                max(1, r_cols.stop - r_cols.start), max(1, r_rows.stop - r_rows.start))
        bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
        try:
            cv2.grabCut(crop, gc_mask, rect, bgd, fgd, self.iterations, cv2.GC_INIT_WITH_RECT)
        except cv2.error:
            return None
        fg = (gc_mask == cv2.GC_FGD) | (gc_mask == cv2.GC_PR_FGD)
        full = np.zeros(obs.rgb.shape[:2], dtype=bool)
        full[rows, cols] = fg
        return largest_component(full)


class RaisedMaskSegmenter:
    """The region standing on the table (from depth) whose box overlaps the detection's most (IoU >= min_iou)."""

    name = "raised"

    def __init__(self, config: RaisedConfig | None = None, min_iou: float = 0.3) -> None:
        self.config = config or RaisedConfig()
        self.min_iou = min_iou

    def segment(self, obs: Observation, detection: Detection) -> Mask | None:
        best, best_iou = None, self.min_iou
        for r in raised_regions(obs, self.config):  # computed once per frame (``per_frame``)
            iou = box_iou(tuple(float(v) for v in r.box_xyxy), detection.box_xyxy)  # type: ignore[arg-type]
            if iou >= best_iou:
                best, best_iou = r, iou
        return None if best is None else best.mask


#: colour words of objects that colour masks cannot tell from the table; their masks come from depth first
PALE = frozenset({"white", "grey"})


class ColorMaskSegmenter:
    """Pixels of the detection's colour inside its box; for pale or uncoloured detections the raised region from
    depth first; GrabCut when the detection has no colour and no region fits."""

    name = "color"

    def __init__(self, grow_px: int = 3, fallback: Segmenter | None = None,
                 raised: RaisedMaskSegmenter | None = None) -> None:
        self.grow_px = grow_px
        self.fallback = fallback or BoxGrabCutSegmenter()
        self.raised = raised or RaisedMaskSegmenter()

    def segment(self, obs: Observation, detection: Detection) -> Mask | None:
        if detection.color is None or detection.color in PALE:
            region = self.raised.segment(obs, detection)
            if region is not None:
                return region
        if detection.color is None:
            return self.fallback.segment(obs, detection)
        rows, cols = box_slices(detection.box_xyxy, obs.rgb.shape, self.grow_px)
        hsv = frame_hsv(obs)  # with whole-image exposure normalisation, once per frame
        local = largest_component(clean(color_mask(hsv[rows, cols], detection.color), 1, 2))
        if local is None:
            return None
        full = np.zeros(obs.rgb.shape[:2], dtype=bool)
        full[rows, cols] = local
        return full

