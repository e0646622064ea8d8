"""Run perception on one simulator scene and describe what it saw (behind ``mallvi perceive``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.observation import Observation
from mallvi.perception.pipeline import make_perception
from mallvi.perception.scene_graph import SceneGraph

SIM_CAMERAS = ("head", "front")


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


def perceive_sim(scene: str, seed: int, mode: str = "color", camera: str = "head") -> PerceiveResult:
    """Build ``scene`` at ``seed``, render ``camera`` and describe it with the ``mode`` pipeline.

    Raises ValueError for an unknown mode or camera and KeyError for an unknown scene, before anything runs.
    """
    if camera not in SIM_CAMERAS:
        raise ValueError(f"unknown camera {camera!r}; choose one of {list(SIM_CAMERAS)}")
    perception = make_perception(mode)
    from mallvi.sim_bridge.scenes import get_scene
    from mallvi.sim_bridge.world import SimWorld

    get_scene(scene)
    with SimWorld.create(scene, seed, cameras=(camera,)) as world:
        obs = world.observe(camera)
        graph = perception.describe(obs)
        truth = {}
        for name in world.truth.object_names():
            info = world.truth.get_object(name)
            truth[name] = np.asarray(info.points["center"].position_m if "center" in info.points
                                     else info.pose.position_m)
    nearest: dict[str, tuple[str, float]] = {}
    for o in graph.objects:
        if truth:
            name, d = min(((n, float(np.linalg.norm(np.asarray(o.position_world) - p))) for n, p in truth.items()),
                          key=lambda t: t[1])
            nearest[o.id] = (name, d)
    return PerceiveResult(scene, seed, mode, obs, graph, dict(perception.times.ms), nearest)


def draw(obs: Observation, graph: SceneGraph) -> NDArray[np.uint8]:
    """The frame (RGB) with each scene-graph object's centre and id drawn in."""
    from mallvi.perception.projection import project

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
