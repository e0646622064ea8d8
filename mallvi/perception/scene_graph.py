"""The Descriptor's visual memory: objects with 3D geometry and the spatial relations between them.

Relations (subject REL object), from world-frame geometry (+x robot's right, +y away from the robot, +z up):
- left_of / right_of: subject x smaller / larger than the object's by more than ``side_margin_m``.
- in_front_of / behind: subject y smaller (closer to the robot) / larger by more than ``side_margin_m``.
- on: footprints overlap by at least ``on_overlap`` of the smaller one and the subject's bottom is within
  ``on_gap_m`` of the object's top.
- in: the object is a container (or clearly larger) and the subject's centre lies inside its footprint,
  between its bottom and its top (+ ``on_gap_m``).
- near: centres closer than ``near_m`` (and not on/in).
left/right and front/behind are only stated between objects that are not stacked (on/in).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from mallvi.perception.query_words import CONTAINERS, phrase

RELATIONS: tuple[str, ...] = ("left_of", "right_of", "in_front_of", "behind", "on", "in", "near")


@dataclass(frozen=True)
class RelationThresholds:
    """Thresholds of the geometric relations, metres."""

    side_margin_m: float = 0.02
    on_gap_m: float = 0.015
    on_overlap: float = 0.3
    near_m: float = 0.12


@dataclass(frozen=True)
class PerceivedObject:
    """One object in the scene graph (world frame, metres).

    ``extent_m`` is the axis-aligned world extent (used by the relations); ``size_m`` (when known) is the size
    in the object's frame, whose x axis has world yaw ``yaw_rad``. ``points`` are named points in the world frame
    as ``[x, y, z, qw, qx, qy, qz]``: the object model's contact ("cpN"), functional ("fpN") and part points
    ("handle", "hook", "rim", ...) where perception reads them from the simulator (privileged), else what the
    geometry tells ("top", "bottom", and "opening" for a container); ``points_source`` says which.

    Separate from the graph's ``SceneObject`` because it carries the full perceived geometry (yaw, object-frame
    size, top) that relations and named points are derived from, and lives below the graph; the graph keeps a
    checkpointable reduction of it in its state.
    """

    id: str
    label: str
    color: str | None
    size_class: str
    position_world: tuple[float, float, float]
    extent_m: tuple[float, float, float]
    score: float
    top_world: tuple[float, float, float] | None = None
    yaw_rad: float = 0.0
    size_m: tuple[float, float, float] | None = None
    points: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    points_source: str = ""

    @property
    def phrase(self) -> str:
        return phrase(self.color, self.label)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["position_world"] = list(self.position_world)
        d["extent_m"] = list(self.extent_m)
        d["top_world"] = list(self.top_world) if self.top_world is not None else None
        d["size_m"] = list(self.size_m) if self.size_m is not None else None
        d["points"] = {k: list(v) for k, v in self.points.items()}
        return d

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> PerceivedObject:
        top = d.get("top_world")
        size = d.get("size_m")
        return PerceivedObject(
            id=str(d["id"]), label=str(d["label"]), color=d.get("color"), size_class=str(d["size_class"]),
            position_world=tuple(float(x) for x in d["position_world"]),  # type: ignore[arg-type]
            extent_m=tuple(float(x) for x in d["extent_m"]),  # type: ignore[arg-type]
            score=float(d["score"]),
            top_world=tuple(float(x) for x in top) if top is not None else None,  # type: ignore[arg-type]
            yaw_rad=float(d.get("yaw_rad", 0.0)),
            size_m=tuple(float(x) for x in size) if size is not None else None,  # type: ignore[arg-type]
            points={str(k): tuple(float(x) for x in v) for k, v in (d.get("points") or {}).items()},
            points_source=str(d.get("points_source", "")),
        )


def size_class(extent_m: Sequence[float]) -> str:
    """"small" (< 4.5 cm), "medium" (< 10 cm) or "large", by the largest extent."""
    m = max(extent_m)
    return "small" if m < 0.045 else "medium" if m < 0.10 else "large"


def object_id(color: str | None, label: str, taken: Iterable[str]) -> str:
    """"<color>_<label>" (or "<label>"), with _2, _3 ... for duplicates."""
    base = f"{color}_{label}" if color else label
    base = base.replace(" ", "_")
    taken = set(taken)
    if base not in taken:
        return base
    k = 2
    while f"{base}_{k}" in taken:
        k += 1
    return f"{base}_{k}"


def _geometric_relations(a: PerceivedObject, b: PerceivedObject, th: RelationThresholds) -> list[str]:
    pa, pb = np.asarray(a.position_world), np.asarray(b.position_world)
    ea, eb = np.asarray(a.extent_m), np.asarray(b.extent_m)
    rels: list[str] = []
    ov_x = max(0.0, min(pa[0] + ea[0] / 2, pb[0] + eb[0] / 2) - max(pa[0] - ea[0] / 2, pb[0] - eb[0] / 2))
    ov_y = max(0.0, min(pa[1] + ea[1] / 2, pb[1] + eb[1] / 2) - max(pa[1] - ea[1] / 2, pb[1] - eb[1] / 2))
    smaller = max(min(ea[0] * ea[1], eb[0] * eb[1]), 1e-9)
    overlap = ov_x * ov_y / smaller
    a_bottom, b_top, b_bottom = pa[2] - ea[2] / 2, pb[2] + eb[2] / 2, pb[2] - eb[2] / 2
    container = b.label in CONTAINERS or (eb[0] > 1.5 * ea[0] and eb[1] > 1.5 * ea[1])
    inside_xy = abs(pa[0] - pb[0]) < eb[0] / 2 and abs(pa[1] - pb[1]) < eb[1] / 2
    stacked = False
    if container and inside_xy and b_bottom - th.on_gap_m <= a_bottom and pa[2] < b_top + th.on_gap_m \
            and a_bottom < b_top - th.on_gap_m:
        rels.append("in")
        stacked = True
    elif overlap >= th.on_overlap and abs(a_bottom - b_top) <= th.on_gap_m:
        rels.append("on")
        stacked = True
    if not stacked and overlap < th.on_overlap:
        if pa[0] < pb[0] - th.side_margin_m:
            rels.append("left_of")
        elif pa[0] > pb[0] + th.side_margin_m:
            rels.append("right_of")
        if pa[1] < pb[1] - th.side_margin_m:
            rels.append("in_front_of")
        elif pa[1] > pb[1] + th.side_margin_m:
            rels.append("behind")
    if not stacked and float(np.linalg.norm(pa - pb)) < th.near_m:
        rels.append("near")
    return rels


@dataclass
class SceneGraph:
    """Objects plus (subject, relation, object) triples; plain data, JSON-serialisable."""

    objects: list[PerceivedObject] = field(default_factory=list)
    relations: list[tuple[str, str, str]] = field(default_factory=list)
    thresholds: RelationThresholds = field(default_factory=RelationThresholds)

    @staticmethod
    def build(objects: Sequence[PerceivedObject], thresholds: RelationThresholds | None = None) -> SceneGraph:
        """A graph whose relations are computed from the objects' geometry."""
        g = SceneGraph(list(objects), [], thresholds or RelationThresholds())
        g.recompute_relations()
        return g

    def recompute_relations(self) -> None:
        self.relations = [
            (a.id, rel, b.id)
            for a in self.objects for b in self.objects if a.id != b.id
            for rel in _geometric_relations(a, b, self.thresholds)
        ]

    def get(self, object_id: str) -> PerceivedObject:
        """The object with this id; KeyError listing the known ids otherwise."""
        for o in self.objects:
            if o.id == object_id:
                return o
        raise KeyError(f"no object {object_id!r} in the scene graph; known: {[o.id for o in self.objects]}")

    def find(self, label: str | None = None, color: str | None = None) -> list[PerceivedObject]:
        """Objects with this label and/or colour, best score first."""
        hits = [
            o for o in self.objects
            if (label is None or o.label == label) and (color is None or o.color == color)
        ]
        return sorted(hits, key=lambda o: -o.score)

    def relation(self, a: str, b: str) -> list[str]:
        """Relations that hold for "a REL b" (ids)."""
        return [r for s, r, o in self.relations if s == a and o == b]

    def to_dict(self) -> dict[str, Any]:
        return {
            "objects": [o.to_dict() for o in self.objects],
            "relations": [list(t) for t in self.relations],
            "thresholds": asdict(self.thresholds),
        }

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> SceneGraph:
        return SceneGraph(
            objects=[PerceivedObject.from_dict(o) for o in d.get("objects", [])],
            relations=[(str(s), str(r), str(o)) for s, r, o in d.get("relations", [])],
            thresholds=RelationThresholds(**d.get("thresholds", {})),
        )

    def to_text(self) -> str:
        """A short rendering for prompts: one line per object, then the relations worth saying."""
        if not self.objects:
            return "Scene: no objects detected."
        lines = ["Objects (world frame, metres; +x right, +y away from the robot, +z up):"]
        for o in self.objects:
            x, y, z = o.position_world
            dx, dy, dz = o.extent_m
            lines.append(
                f"- {o.id}: {o.size_class} {o.phrase} at ({x:+.3f}, {y:+.3f}, {z:.3f}), "
                f"size {dx:.3f}x{dy:.3f}x{dz:.3f}, score {o.score:.2f}"
            )
        said = [(s, r, t) for s, r, t in self.relations if r in ("on", "in", "left_of", "in_front_of", "near")]
        said = [(s, r, t) for s, r, t in said if r != "near" or s < t]
        if said:
            lines.append("Relations: " + "; ".join(f"{s} {r} {t}" for s, r, t in said))
        return "\n".join(lines)
