"""Scoring perception against ground truth (simulator masks and object centres).

A truth object is matched to at most one detection and vice versa, greedily by box IoU (>= ``min_iou``) between
the detection box and the tight box of the object's simulator mask. Names are never used for matching.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from mallvi.contracts.observation import Observation
from mallvi.perception.types import Detection, box_iou, mask_box


@dataclass(frozen=True)
class TruthObject:
    """What the simulator knows about one object: its name, centre (world, m) and mask in this frame."""

    name: str
    center_world: tuple[float, float, float]
    mask_box: tuple[float, float, float, float] | None


@dataclass
class FrameScore:
    """Matches of one frame: truth name -> (detection index, IoU), plus unmatched detections."""

    matches: dict[str, tuple[int, float]] = field(default_factory=dict)
    missed: list[str] = field(default_factory=list)
    false_positives: list[int] = field(default_factory=list)
    errors_m: dict[str, float] = field(default_factory=dict)

    @property
    def recall(self) -> float:
        n = len(self.matches) + len(self.missed)
        return len(self.matches) / n if n else 1.0


def truth_from_sim(obs: Observation, centers_world: Mapping[str, Sequence[float]]) -> list[TruthObject]:
    """Truth objects from a simulator observation's segmentation and the objects' true centres."""
    out = []
    for name, c in centers_world.items():
        m = obs.mask_of(name)
        out.append(TruthObject(name, (float(c[0]), float(c[1]), float(c[2])), mask_box(m) if m is not None else None))
    return out


def match(detections: Sequence[Detection], truth: Sequence[TruthObject], min_iou: float = 0.5) -> FrameScore:
    """Greedy one-to-one matching by box IoU; truth objects invisible in the frame are ignored."""
    visible = [t for t in truth if t.mask_box is not None]
    pairs = sorted(
        ((box_iou(d.box_xyxy, t.mask_box), i, t.name)  # type: ignore[arg-type]
         for i, d in enumerate(detections) for t in visible),
        reverse=True,
    )
    score = FrameScore()
    used: set[int] = set()
    for iou, i, name in pairs:
        if iou < min_iou:
            break
        if i in used or name in score.matches:
            continue
        score.matches[name] = (i, iou)
        used.add(i)
    score.missed = [t.name for t in visible if t.name not in score.matches]
    score.false_positives = [i for i in range(len(detections)) if i not in used]
    return score


def add_errors(score: FrameScore, positions_world: Mapping[int, Sequence[float]], truth: Sequence[TruthObject]
               ) -> None:
    """Fill ``score.errors_m`` with the 3D distance between each matched detection's position and the truth."""
    by_name = {t.name: t for t in truth}
    for name, (i, _) in score.matches.items():
        if i in positions_world:
            score.errors_m[name] = float(np.linalg.norm(np.asarray(positions_world[i]) - by_name[name].center_world))
