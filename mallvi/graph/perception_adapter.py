"""Adapts ``mallvi.perception.pipeline.Perception`` to the graph's PerceptionPort (plain pydantic types)."""

from __future__ import annotations

import logging

from mallvi.contracts.observation import Observation
from mallvi.graph.schemas import Detection2D, SceneObject
from mallvi.perception.pipeline import Perception
from mallvi.perception.types import Detection, LocalizationError
from mallvi.perception.vocab import parse_query

log = logging.getLogger(__name__)


class PipelinePort:
    """PerceptionPort over the perception pipeline; keeps the pipeline's detections to localise them later."""

    def __init__(self, perception: Perception) -> None:
        self.perception = perception
        self._by_box: dict[tuple[str, str, tuple[float, ...]], Detection] = {}  # (camera, query, box)
        #: what perception saw last: the latest scan, updated by later localisations (a rig's world model)
        self.latest: dict[str, SceneObject] = {}

    def scan(self, obs: Observation) -> list[SceneObject]:
        graph = self.perception.describe(obs)
        objects = [
            SceneObject(id=o.id, label=o.label, color=o.color, position_m=o.position_world, size_m=o.extent_m,
                        score=o.score, source="describe")
            for o in graph.objects
        ]
        self.latest = {o.id: o for o in objects}
        return objects

    def detect(self, obs: Observation, queries: dict[str, str]) -> dict[str, list[Detection2D]]:
        out: dict[str, list[Detection2D]] = {k: [] for k in queries}
        if not queries:
            return out
        self._by_box = {k: v for k, v in self._by_box.items() if k[0] != obs.camera}  # this camera's last pass only
        dets = self.perception.detect(obs, list(dict.fromkeys(queries.values())))
        for key, text in queries.items():
            for d in dets:
                if (d.query or d.label) != text:
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
        obj = SceneObject(id=det.query.replace(" ", "_"), label=q.label or "object", color=d.color,
                          position_m=loc.position_world, size_m=loc.extent_m, score=loc.score, source=d.source)
        same = [k for k, o in self.latest.items() if o.color == obj.color and o.label == obj.label]
        self.latest[same[0] if len(same) == 1 else obj.id] = obj.model_copy(
            update={"id": same[0] if len(same) == 1 else obj.id})
        return obj
