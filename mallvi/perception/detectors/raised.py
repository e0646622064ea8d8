"""Weight-free detector of pale objects: what stands on the table in the depth cloud and colour does not claim.

See ``perception/raised_regions.py`` for how regions are found and named. A query selects by colour word and label;
a region whose shape cue is only "object" still answers a query for a bowl or a bottle, ranked lower.
"""

from __future__ import annotations

import numpy as np

from mallvi.contracts.observation import Observation
from mallvi.perception.query_words import ParsedQuery, parse_query, phrase
from mallvi.perception.raised_regions import RaisedConfig, raised_regions
from mallvi.perception.types import Detection

#: score factor for a region whose shape cue does not name the label a query asks for
UNSURE_SHAPE_FACTOR = 0.6
#: score factor for a region cut by the image edge (seen in part)
CUT_SCORE_FACTOR = 0.8


class RaisedObjectDetector:
    """Objects from depth (white, grey, beige ...); needs a depth image, finds nothing without one."""

    name = "raised"

    def __init__(self, config: RaisedConfig | None = None) -> None:
        self.config = config or RaisedConfig()

    def detect(self, obs: Observation, queries: list[str]) -> list[Detection]:
        parsed = [parse_query(q) for q in queries]
        out: list[Detection] = []
        for region in raised_regions(obs, self.config):
            area = float(region.mask.sum())
            score = 0.9 * (1.0 - float(np.exp(-area / (3.0 * self.config.min_area_px))))
            if region.cut:
                score *= CUT_SCORE_FACTOR
            det = Detection(box_xyxy=tuple(float(v) for v in region.box_xyxy),  # type: ignore[arg-type]
                            score=round(score, 4), label=phrase(region.color, region.shape), source=self.name,
                            color=region.color, scores={self.name: score})
            answered = _answer(region.color, region.shape, parsed)
            if answered is None:
                continue
            query, factor = answered
            if query is not None or factor != 1.0:
                s = round(score * factor, 4)
                det = Detection(det.box_xyxy, s, det.label, det.source, det.color, {self.name: s},
                                query=query.text if query is not None else None)
            out.append(det)
        out.sort(key=lambda d: -d.score)
        return out


def _answer(color: str | None, shape: str, parsed: list[ParsedQuery]) -> tuple[ParsedQuery | None, float] | None:
    """(query answered, score factor); (None, 1) without queries; None when no query fits."""
    if not parsed:
        return None, 1.0
    unsure = None
    for p in parsed:
        if p.color is not None and p.color != color:
            continue
        if not p.label or p.label == shape:
            return p, 1.0
        if shape == "object":
            unsure = unsure or p
    return (unsure, UNSURE_SHAPE_FACTOR) if unsure is not None else None
