"""The Grounder's fusion (MALLVi 3.1.2): weigh detectors by calibrated confidence and scene-graph agreement.

1. Calibrate each detector's raw score with a Platt map p = sigmoid(a * score + b) (identity for detectors
   without one) and weight it by the detector's reliability r.
2. Merge detections of different detectors that overlap (IoU >= ``iou_merge``) and do not contradict each
   other's colour; one detection per detector per group.
3. Evidence = 1 - prod(1 - r_i p_i) (independent detectors agreeing raise it); the box is the evidence-weighted
   mean box.
4. With the Descriptor's scene graph: an object of the same colour/label (1.0 if, given the camera, its centre
   also projects into the box; 0.7 for colour/label only; 0.3 for no match) is blended in with weight
   ``graph_weight``. Every per-source score is kept in ``Detection.scores``.
No input detections -> an empty list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from mallvi.contracts.observation import Observation
from mallvi.perception.projection import project
from mallvi.perception.query_words import parse_query
from mallvi.perception.scene_graph import SceneGraph
from mallvi.perception.types import Detection, box_iou

DEFAULT_RELIABILITY: dict[str, float] = {"sim": 1.0, "color": 0.9, "raised": 0.85, "grounding_dino": 0.8, "owlv2": 0.75}
#: Platt parameters (a, b) for the neural detectors' raw scores (their useful range is low, ~0.2..0.6)
DEFAULT_PLATT: dict[str, tuple[float, float]] = {"grounding_dino": (10.0, -3.5), "owlv2": (12.0, -3.0)}


@dataclass(frozen=True)
class FusionConfig:
    """Weights and thresholds of the fusion."""

    reliability: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_RELIABILITY))
    platt: Mapping[str, tuple[float, float]] = field(default_factory=lambda: dict(DEFAULT_PLATT))
    iou_merge: float = 0.5
    graph_weight: float = 0.2
    min_score: float = 0.05


def calibrate(source: str, score: float, config: FusionConfig) -> float:
    """The calibrated probability of a raw detector score."""
    if source in config.platt:
        a, b = config.platt[source]
        return float(1.0 / (1.0 + np.exp(-(a * score + b))))
    return float(np.clip(score, 0.0, 1.0))


def fit_platt(raw_scores: Sequence[float], correct: Sequence[bool], iterations: int = 50,
              l2: float = 1e-3) -> tuple[float, float]:
    """Fit Platt parameters (a, b) of p = sigmoid(a * score + b) to labelled detections (Newton's method on the
    log-loss with a small L2 penalty and Platt's smoothed targets). Use the result in ``FusionConfig.platt``."""
    s = np.asarray(raw_scores, dtype=float)
    y = np.asarray(correct, dtype=bool)
    if s.shape != y.shape or s.size < 2:
        raise ValueError("fit_platt needs at least two scores and one label per score")
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    t = np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    X = np.stack([s, np.ones_like(s)], axis=1)
    w = np.zeros(2)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        grad = X.T @ (p - t) + l2 * w
        H = (X * (p * (1.0 - p))[:, None]).T @ X + l2 * np.eye(2)
        step = np.linalg.solve(H, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-9:
            break
    return float(w[0]), float(w[1])


def _compatible(a: Detection, b: Detection) -> bool:
    return a.color is None or b.color is None or a.color == b.color


def _graph_agreement(det: Detection, graph: SceneGraph, obs: Observation | None) -> float:
    q = parse_query(det.label)
    color = det.color or q.color
    matches = [o for o in graph.objects if (color is None or o.color == color) and (not q.label or
               q.label in ("object",) or o.label == q.label or o.label == "object")]
    if not matches:
        return 0.3
    if obs is None:
        return 0.7
    x0, y0, x1, y1 = det.box_xyxy
    gx, gy = 0.1 * (x1 - x0), 0.1 * (y1 - y0)
    centres = np.array([o.position_world for o in matches], dtype=float)
    uv, z = project(centres, obs.K, obs.T_world_cam)
    inside = (z > 0) & (uv[:, 0] >= x0 - gx) & (uv[:, 0] <= x1 + gx) & (uv[:, 1] >= y0 - gy) & (uv[:, 1] <= y1 + gy)
    return 1.0 if bool(inside.any()) else 0.7


def fuse(
    detections_by_detector: Mapping[str, Sequence[Detection]],
    scene_graph: SceneGraph | None = None,
    config: FusionConfig | None = None,
    obs: Observation | None = None,
    weights: Mapping[str, float] | None = None,
) -> list[Detection]:
    """Fused detections (source "fused"), best first.

    ``obs`` enables the scene graph's position check; ``weights`` overrides detectors' reliabilities.
    """
    cfg = config or FusionConfig()
    if weights:
        cfg = replace(cfg, reliability={**cfg.reliability, **weights})
    items: list[tuple[float, str, Detection]] = []
    for source, dets in detections_by_detector.items():
        r = float(cfg.reliability.get(source, 0.5))
        for d in dets:
            items.append((r * calibrate(source, d.score, cfg), source, d))
    items.sort(key=lambda t: -t[0])

    groups: list[dict[str, tuple[float, Detection]]] = []
    for ev, source, det in items:
        for g in groups:
            lead = max(g.values(), key=lambda t: t[0])[1]
            if source not in g and _compatible(lead, det) and box_iou(lead.box_xyxy, det.box_xyxy) >= cfg.iou_merge:
                g[source] = (ev, det)
                break
        else:
            groups.append({source: (ev, det)})

    use_graph = scene_graph is not None and bool(scene_graph.objects)
    out: list[Detection] = []
    for g in groups:
        evs = np.array([ev for ev, _ in g.values()])
        boxes = np.array([d.box_xyxy for _, d in g.values()])
        evidence = float(1.0 - np.prod(1.0 - np.clip(evs, 0.0, 0.999)))
        # the evidence-weighted box; detections that all scored 0 (kept by the scene graph's agreement) weigh alike
        w = evs if float(evs.sum()) > 1e-9 else np.ones_like(evs)
        box = tuple(float(x) for x in (w[:, None] * boxes).sum(axis=0) / float(w.sum()))
        lead = max(g.values(), key=lambda t: t[0])[1]
        color = lead.color or next((d.color for _, d in g.values() if d.color), None)
        scores: dict[str, float] = {}
        for source, (_, d) in g.items():
            scores[source] = d.score
            scores.update({k: v for k, v in d.scores.items() if k not in scores})
        score = evidence
        if use_graph:
            assert scene_graph is not None
            agreement = _graph_agreement(lead, scene_graph, obs)
            scores["scene_graph"] = agreement
            score = (1.0 - cfg.graph_weight) * evidence + cfg.graph_weight * agreement
        if score < cfg.min_score:
            continue
        out.append(Detection(
            box_xyxy=box, score=round(min(1.0, score), 6), label=lead.label, source="fused", color=color,  # type: ignore[arg-type]
            scores=scores, query=lead.query or next((d.query for _, d in g.values() if d.query), None),
            instance=next((d.instance for _, d in g.values() if d.instance), None),
        ))
    out.sort(key=lambda d: -d.score)
    return out
