"""Privileged detector: boxes straight from the simulator's segmentation image (isolates planning from vision)."""

from __future__ import annotations

import re

import numpy as np

from mallvi.contracts.observation import Observation
from mallvi.perception.query_words import parse_query, phrase, split_name
from mallvi.perception.types import Detection, PerceptionError, mask_box

#: segmentation names that are scenery or robot, never manipulable objects
DEFAULT_IGNORE = r"(?i)^(table|ground|floor|wall|background|pedestal|camera)|arm|link|gripper|finger|robot|base"


class SimSegDetector:
    """One detection per visible object id in ``obs.seg`` (score 1.0); needs a simulator observation."""

    name = "sim"

    def __init__(self, ignore_pattern: str = DEFAULT_IGNORE, min_area_px: int = 10) -> None:
        self._ignore = re.compile(ignore_pattern)
        self.min_area_px = min_area_px

    def detect(self, obs: Observation, queries: list[str]) -> list[Detection]:
        if obs.seg is None:
            raise PerceptionError("the 'sim' detector needs a simulator observation with segmentation (obs.seg)")
        parsed = [parse_query(q) for q in queries]
        by_name: dict[str, list[int]] = {}
        for seg_id, name in obs.seg_names.items():
            if name and not self._ignore.search(name):
                by_name.setdefault(name, []).append(int(seg_id))
        out: list[Detection] = []
        for name, ids in sorted(by_name.items()):
            mask = np.isin(obs.seg, ids)
            if int(mask.sum()) < self.min_area_px:
                continue
            box = mask_box(mask)
            if box is None:
                continue
            color, label = split_name(name)
            query = None
            if parsed:
                hit = next((p for p in parsed if p.matches(color, label)), None)
                if hit is None:
                    continue
                query = hit.text
            out.append(Detection(
                box_xyxy=box, score=1.0, label=phrase(color, label), source=self.name, color=color,
                scores={self.name: 1.0}, query=query, instance=name,
            ))
        return out
