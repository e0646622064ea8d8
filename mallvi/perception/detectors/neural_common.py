"""What the open-vocabulary detectors share: default vocabulary, query labels, box clean-up and NMS."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from mallvi.perception.query_words import parse_query, phrase
from mallvi.perception.types import Detection, box_iou

DEFAULT_VOCABULARY: tuple[str, ...] = ("block", "bowl", "mug", "can", "bottle", "basket", "plate")


def clean_queries(queries: Sequence[str], vocabulary: Sequence[str]) -> list[str]:
    """Lower-cased queries without articles or punctuation; the vocabulary when there are none."""
    out = []
    for q in queries or vocabulary:
        words = [w for w in re.findall(r"[a-z0-9]+", q.lower()) if w not in ("the", "a", "an")]
        if words:
            out.append(" ".join(words))
    return list(dict.fromkeys(out))


def make_detection(box: Sequence[float], score: float, query: str, original: str | None, source: str,
                   width: int, height: int) -> Detection | None:
    """A detection for one model box (clipped to the image), labelled with the query; None if degenerate."""
    x0, y0 = float(np.clip(box[0], 0, width)), float(np.clip(box[1], 0, height))
    x1, y1 = float(np.clip(box[2], 0, width)), float(np.clip(box[3], 0, height))
    if x1 - x0 < 1.0 or y1 - y0 < 1.0 or not np.isfinite(score):
        return None
    p = parse_query(query)
    s = float(np.clip(score, 0.0, 1.0))
    return Detection((x0, y0, x1, y1), s, phrase(p.color, p.label or query), source, p.color, {source: s},
                     query=original)


def nms(dets: list[Detection], iou: float = 0.5, max_per_label: int = 10) -> list[Detection]:
    """Greedy non-maximum suppression per label, best score first."""
    kept: list[Detection] = []
    for d in sorted(dets, key=lambda d: -d.score):
        same = [k for k in kept if k.label == d.label]
        if len(same) < max_per_label and all(box_iou(k.box_xyxy, d.box_xyxy) < iou for k in same):
            kept.append(d)
    return kept


def best_query(text_label: str, queries: Sequence[str]) -> int | None:
    """Index of the query sharing most words with a model's text label (GroundingDINO phrases); None if none."""
    words = set(text_label.lower().split())
    overlaps = [len(words & set(q.split())) for q in queries]
    if not overlaps or max(overlaps) == 0:
        return None
    return int(np.argmax(overlaps))
