"""Run perception on one frame and describe what it saw beside the true objects (behind ``mallvi perceive``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.observation import Observation
from mallvi.perception.pipeline import make_perception
from mallvi.perception.projection import project
from mallvi.perception.scene_graph import SceneGraph


@dataclass
class PerceiveResult:
    """A scene graph from one frame, the frame itself, stage timings and the distance of each perceived object
    to the nearest simulator object (name, metres)."""

    scene: str
    seed: int
    mode: str
    obs: Observation
    graph: SceneGraph
    times_ms: dict[str, float]
    nearest_truth: dict[str, tuple[str, float]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "scene": self.scene, "seed": self.seed, "perception": self.mode, "camera": self.obs.camera,
            **self.graph.to_dict(),
            "times_ms": {k: round(v, 2) for k, v in self.times_ms.items()},
            "nearest_truth": {k: {"name": n, "distance_m": round(d, 4)} for k, (n, d) in self.nearest_truth.items()},
        }


def perceive_frame(
    scene: str, seed: int, mode: str, take_frame: Callable[[], tuple[Observation, Mapping[str, Sequence[float]]]]
) -> PerceiveResult:
    """Describe one frame with the ``mode`` pipeline and match each perceived object to the nearest true object.

    ``take_frame`` returns the frame and the true object centres (world frame, metres); it is called only after
    ``mode`` is known to be valid (ValueError otherwise), so a bad mode builds nothing.
    """
    perception = make_perception(mode)
    obs, centres = take_frame()
    graph = perception.describe(obs)
    truth = {name: np.asarray(c, dtype=float) for name, c in centres.items()}
    nearest: dict[str, tuple[str, float]] = {}
    for o in graph.objects:
        if truth:
            name, d = min(((n, float(np.linalg.norm(np.asarray(o.position_world) - p))) for n, p in truth.items()),
                          key=lambda t: t[1])
            nearest[o.id] = (name, d)
    return PerceiveResult(scene, seed, mode, obs, graph, dict(perception.times.ms), nearest)


def draw(obs: Observation, graph: SceneGraph) -> NDArray[np.uint8]:
    """The frame (RGB) with each scene-graph object's centre and id drawn in."""
    img = np.ascontiguousarray(obs.rgb.copy())
    if not graph.objects:
        return img
    uv, z = project(np.array([o.position_world for o in graph.objects]), obs.K, obs.T_world_cam)
    for o, (u, v), d in zip(graph.objects, uv, z, strict=True):
        if d <= 0 or not np.isfinite(u) or not np.isfinite(v):
            continue
        p = (int(np.rint(u)), int(np.rint(v)))
        cv2.drawMarker(img, p, (255, 255, 255), cv2.MARKER_CROSS, 12, 2)
        cv2.putText(img, o.id, (p[0] + 6, p[1] - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 2, cv2.LINE_AA)
        cv2.putText(img, o.id, (p[0] + 6, p[1] - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (255, 255, 255), 1, cv2.LINE_AA)
    return img
