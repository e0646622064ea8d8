"""Adapts ``mallvi.perception.pipeline.Perception`` to the graph's PerceptionPort (plain pydantic types).

The port also keeps what perception saw last with its full geometry, so that on a rig object names resolve
through it (``world_model()``) to the same named points as the simulator's objects.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from mallvi.contracts.observation import Observation
from mallvi.graph.schemas import Detection2D, PointPose, SceneObject
from mallvi.perception.object_points import points_of
from mallvi.perception.perceived_world import PerceptionWorldModel
from mallvi.perception.pipeline import Perception
from mallvi.perception.query_words import parse_query
from mallvi.perception.scene_graph import PerceivedObject, size_class
from mallvi.perception.types import Detection, LocalizationError, Localized3D

log = logging.getLogger(__name__)


class PipelinePort:
    """PerceptionPort over the perception pipeline; keeps the pipeline's detections to localise them later."""

    def __init__(self, perception: Perception) -> None:
        self.perception = perception
        self._by_box: dict[tuple[str, str, tuple[float, ...]], Detection] = {}  # (camera, query, box)
        #: what perception saw last, with full geometry: the latest scan, updated by later localisations
        self.perceived: dict[str, PerceivedObject] = {}

    def world_model(self) -> PerceptionWorldModel:
        """A world model that resolves names to what this port saw last (how names resolve on a rig)."""
        return PerceptionWorldModel(source=lambda: list(self.perceived.values()))

    def scan(self, obs: Observation) -> list[SceneObject]:
        graph = self.perception.describe(obs)
        objects = [
            SceneObject(id=o.id, label=o.label, color=o.color, position_m=_centre(o.position_world, o.points),
                        size_m=o.extent_m, score=o.score, source="describe", box_m=o.size_m,
                        box_yaw_rad=None if o.size_m is None else o.yaw_rad, points=_poses(o.points),
                        points_source=o.points_source)
            for o in graph.objects
        ]
        self.perceived = {o.id: o for o in graph.objects}
        return objects

    def detect(self, obs: Observation, queries: dict[str, str]) -> dict[str, list[Detection2D]]:
        out: dict[str, list[Detection2D]] = {k: [] for k in queries}
        if not queries:
            return out
        self._by_box = {k: v for k, v in self._by_box.items() if k[0] != obs.camera}  # this camera's last pass only
        dets = self.perception.detect(obs, list(dict.fromkeys(queries.values())))
        for key, text in queries.items():
            for d in dets:
                # fusion keeps one query per box: a box another query took ("bowl") still answers the query its
                # label names ("grey bowl")
                if text not in (d.query or d.label, d.label):
                    continue
                d2 = Detection2D(query=text, box_xyxy=d.box_xyxy, score=d.score, label=d.label, source=d.source)
                self._by_box[(obs.camera, text, d.box_xyxy)] = d
                out[key].append(d2)
        return out

    def localize(self, obs: Observation, det: Detection2D) -> SceneObject | None:
        d = self._by_box.get((obs.camera, det.query, tuple(det.box_xyxy)))
        if d is None:
            q = parse_query(det.label or det.query)
            d = Detection(box_xyxy=det.box_xyxy, score=det.score, label=det.label or det.query, source=det.source,
                          color=q.color, query=det.query)
        try:
            loc = self.perception.localize(obs, d)
        except LocalizationError as e:
            log.info("localize %s failed: %s", det.query, e)
            return None
        q = parse_query(d.label)
        label = q.label or "object"
        points, source = points_of(obs, d, loc.position_world, loc.extent_m, loc.top_world, loc.object_yaw_rad,
                                   label)
        obj = SceneObject(id=det.query.replace(" ", "_"), label=label, color=d.color,
                          position_m=_centre(loc.position_world, points), size_m=loc.extent_m, score=loc.score,
                          source=d.source,
                          box_m=loc.size_m if all(v > 0 for v in loc.size_m) else None,
                          box_yaw_rad=loc.object_yaw_rad if all(v > 0 for v in loc.size_m) else None,
                          points=_poses(points),
                          points_source=source)
        same = [k for k, o in self.perceived.items() if o.color == obj.color and o.label == obj.label]
        key = same[0] if len(same) == 1 else obj.id
        self.perceived[key] = _perceived(key, obj, loc)
        return obj


def _perceived(key: str, obj: SceneObject, loc: Localized3D) -> PerceivedObject:
    """A localisation as a scene-graph object called ``key``."""
    return PerceivedObject(id=key, label=obj.label, color=obj.color, size_class=size_class(loc.extent_m),
                           position_world=loc.position_world, extent_m=loc.extent_m, score=loc.score,
                           top_world=loc.top_world, yaw_rad=loc.object_yaw_rad,
                           size_m=loc.size_m if all(v > 0 for v in loc.size_m) else None,
                           points=dict(obj.points), points_source=obj.points_source)


def _centre(perceived_m: tuple[float, float, float],
            points: Mapping[str, tuple[float, ...]]) -> tuple[float, float, float]:
    """An object's centre: its model's box centre where the simulator gives the model's points (privileged, like
    the points themselves), else where depth puts it."""
    box = points.get("bbox_center")
    return (float(box[0]), float(box[1]), float(box[2])) if box is not None and len(box) >= 3 else perceived_m


def _poses(points: Mapping[str, tuple[float, ...]]) -> dict[str, PointPose]:
    """Named points as the state keeps them (7 numbers each; anything else is left out)."""
    return {k: tuple(float(x) for x in v) for k, v in points.items() if len(v) == 7}  # type: ignore[misc]
