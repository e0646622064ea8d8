"""The perception pipeline the graph's agents call: detect (Grounder), localize (Projector), describe (Descriptor)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from mallvi.contracts.observation import Observation
from mallvi.perception.detectors import make_detector
from mallvi.perception.fusion import FusionConfig, fuse
from mallvi.perception.grasp import grasp_point
from mallvi.perception.object_points import points_of
from mallvi.perception.projection import mask_geometry, project, support_z, surface_point
from mallvi.perception.query_words import category_of, parse_query
from mallvi.perception.rim import rim_centre, upright_axis
from mallvi.perception.scene_graph import PerceivedObject, RelationThresholds, SceneGraph, object_id, size_class
from mallvi.perception.segmentation import ColorMaskSegmenter, Segmenter, SimMaskSegmenter
from mallvi.perception.types import Detection, Detector, LocalizationError, Localized3D, PerceptionError

log = logging.getLogger(__name__)


@dataclass
class StageTimes:
    """Milliseconds spent per stage in the last call (detect, fuse, segment, grasp, project)."""

    ms: dict[str, float] = field(default_factory=dict)

    def add(self, stage: str, seconds: float) -> None:
        self.ms[stage] = self.ms.get(stage, 0.0) + 1000.0 * seconds


#: environment variables naming the neural models' locations (used when make_perception gets none)
NEURAL_MODEL_ENV = {
    "grounding_dino": "MALLVI_GROUNDING_DINO_MODEL",
    "owlv2": "MALLVI_OWLV2_MODEL",
    "sam": "MALLVI_SAM_MODEL",
}


def make_perception(mode: str, **detector_kw: object) -> Perception:
    """The pipeline behind ``--perception``: "sim", "color" (colour masks, plus pale objects standing on the table
    found from depth) or "neural" (GroundingDINO + OWLv2 + the same weight-free detectors).

    For "neural" pass ``grounding_dino_model=`` and ``owlv2_model=`` (local folders or hub ids) and optionally
    ``sam_model=``; each defaults to its environment variable in ``NEURAL_MODEL_ENV``.
    """
    if mode == "sim":
        return Perception([make_detector("sim")], SimMaskSegmenter())
    if mode == "color":
        return Perception([make_detector("color"), make_detector("raised")], ColorMaskSegmenter())
    if mode == "neural":
        dets: list[Detector] = [make_detector("color"), make_detector("raised")]
        for name in ("grounding_dino", "owlv2"):
            model = detector_kw.get(f"{name}_model") or os.environ.get(NEURAL_MODEL_ENV[name])
            if model:
                dets.append(make_detector(name, model=str(model)))
        if len(dets) == 2:
            raise ValueError(
                "neural perception needs grounding_dino_model and/or owlv2_model (or the environment variables "
                f"{NEURAL_MODEL_ENV['grounding_dino']} / {NEURAL_MODEL_ENV['owlv2']}): a local folder or a hub id"
            )
        seg: Segmenter = ColorMaskSegmenter()
        sam = detector_kw.get("sam_model") or os.environ.get(NEURAL_MODEL_ENV["sam"])
        if sam:
            from mallvi.perception.neural.sam import SamSegmenter

            seg = SamSegmenter(model=str(sam))
        return Perception(dets, seg)
    raise ValueError(f"unknown perception mode {mode!r}; choose sim, color or neural")


class Perception:
    """Detectors + fusion + segmenter + grasp rules + projection, and the scene graph built from them.

    ``memory`` is the Descriptor's last scene graph; ``detect`` uses it in fusion when it is set.
    """

    def __init__(
        self,
        detectors: Sequence[Detector],
        segmenter: Segmenter,
        fusion: FusionConfig | None = None,
        relations: RelationThresholds | None = None,
        default_queries: Sequence[str] = (),
        min_score: float = 0.3,
        erode_px: int = 0,
    ) -> None:
        if not detectors:
            raise ValueError("Perception needs at least one detector")
        self.detectors = list(detectors)
        self.segmenter = segmenter
        self.fusion = fusion or FusionConfig()
        self.relations = relations or RelationThresholds()
        self.default_queries = list(default_queries)
        self.min_score = min_score
        self.erode_px = erode_px
        self.memory: SceneGraph | None = None
        self.times = StageTimes()

    def detect(self, obs: Observation, queries: list[str]) -> list[Detection]:
        """Fused detections answering ``queries`` (every object when empty), best first; [] when none."""
        self.times = StageTimes()
        by_detector: dict[str, list[Detection]] = {}
        for det in self.detectors:
            t0 = time.perf_counter()
            by_detector[det.name] = det.detect(obs, queries or self.default_queries)
            self.times.add("detect", time.perf_counter() - t0)
        t0 = time.perf_counter()
        fused = fuse(by_detector, self.memory, self.fusion, obs)
        self.times.add("fuse", time.perf_counter() - t0)
        out = [d for d in fused if d.score >= self.min_score]
        log.debug("detect %s -> %d fused detections", queries, len(out))
        return out

    def localize(self, obs: Observation, detection: Detection, table_z: float | None = None) -> Localized3D:
        """Mask, grasp pixel, yaw and 3D geometry of a detection; LocalizationError says what was missing."""
        t0 = time.perf_counter()
        mask = self.segmenter.segment(obs, detection)
        self.times.add("segment", time.perf_counter() - t0)
        if mask is None or not mask.any():
            raise LocalizationError(f"no mask for {detection.label!r} in box {detection.box_xyxy}")
        t0 = time.perf_counter()
        try:
            gp = grasp_point(mask, category_of(detection.label))
        except PerceptionError as e:
            raise LocalizationError(str(e)) from e
        self.times.add("grasp", time.perf_counter() - t0)
        t0 = time.perf_counter()
        table_z = support_z(obs) if table_z is None else table_z
        geo = mask_geometry(mask, obs, erode_px=self.erode_px, table_z=table_z)
        try:
            grasp_world = tuple(float(x) for x in surface_point(mask, obs, gp.u, gp.v))
        except LocalizationError:
            grasp_world = geo.top_world
        centre, top = geo.center_world, geo.top_world
        c_xy = None
        if gp.category in ("rimmed", "round"):  # a bowl's visible points miss its near side; its rim arc does not
            c_xy = rim_centre(mask, obs)  # (None for a solid round top: its points fill the circle)
        if c_xy is None and table_z is not None and geo.extent_m[2] > 1.3 * max(geo.size_m[:2]):
            c_xy = upright_axis(mask, obs, table_z)  # a standing cylinder shows only its near half
        if c_xy is not None:
            centre = (float(c_xy[0]), float(c_xy[1]), centre[2])
            top = (float(c_xy[0]), float(c_xy[1]), top[2])
        self.times.add("project", time.perf_counter() - t0)
        return Localized3D(
            detection=detection, mask=mask, grasp=gp, grasp_world=grasp_world,  # type: ignore[arg-type]
            yaw_rad=geo.top_yaw_rad, position_world=centre, top_world=top,
            extent_m=geo.extent_m, score=detection.score, size_m=geo.size_m, object_yaw_rad=geo.yaw_rad,
        )

    def describe(self, obs: Observation, remember: bool = True) -> SceneGraph:
        """Detect and localise every object, build the scene graph and (by default) keep it as ``memory``."""
        previous, self.memory = self.memory, None  # describe from the image alone, not from old memory
        try:
            dets = self.detect(obs, [])
        finally:
            self.memory = previous
        table_z = support_z(obs)
        objects: list[PerceivedObject] = []
        for det in dets:
            try:
                loc = self.localize(obs, det, table_z=table_z)
            except LocalizationError as e:
                log.info("describe: skipping %s: %s", det.label, e)
                continue
            label = refine_label(parse_query(det.label).label or "object", loc.extent_m)
            points, source = points_of(obs, det, loc.position_world, loc.extent_m, loc.top_world,
                                       loc.object_yaw_rad, label)
            objects.append(PerceivedObject(
                id=object_id(det.color, label, [o.id for o in objects]), label=label, color=det.color,
                size_class=size_class(loc.extent_m), position_world=loc.position_world, extent_m=loc.extent_m,
                score=det.score, top_world=loc.top_world, yaw_rad=loc.object_yaw_rad, size_m=loc.size_m,
                points=points, points_source=source,
            ))
        graph = SceneGraph.build(objects, self.relations)
        if remember:
            self.memory = graph
        return graph


def refine_label(label: str, extent_m: tuple[float, float, float]) -> str:
    """A weight-free detector's "block" that is flat (under 2 cm and under a third of its width) is a "pad"."""
    dx, dy, dz = extent_m
    if label == "block" and dz < 0.02 and dz < min(dx, dy) / 3.0:
        return "pad"
    return label


def visible_in(graph: SceneGraph, obs: Observation) -> list[str]:
    """Ids of scene-graph objects whose centres project inside the image (for re-scan decisions)."""
    if not graph.objects:
        return []
    uv, z = project(np.array([o.position_world for o in graph.objects]), obs.K, obs.T_world_cam)
    ok = (z > 0) & (uv[:, 0] >= 0) & (uv[:, 0] < obs.width) & (uv[:, 1] >= 0) & (uv[:, 1] < obs.height)
    return [o.id for o, k in zip(graph.objects, ok, strict=True) if k]
