"""Plain perception results: 2D detections, grasp points and localised 3D targets (all serialisable)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.observation import Observation

DetectorSource = Literal["color", "raised", "sim", "grounding_dino", "owlv2", "fused"]
GraspCategory = Literal["block", "round", "rimmed", "irregular"]


class PerceptionError(RuntimeError):
    """Perception could not produce a result (the message says why); callers report it, never guess."""


class LocalizationError(PerceptionError):
    """A detection could not be turned into a 3D target (no mask, no valid depth, ...)."""


def _floats(values: Any, n: int, what: str) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if len(out) != n or not all(np.isfinite(out)):
        raise ValueError(f"{what} needs {n} finite numbers, got {values!r}")
    return out


@dataclass(frozen=True)
class Detection:
    """One object found in an image.

    Attributes:
        box_xyxy: (x0, y0, x1, y1) in pixels, x0 < x1, y0 < y1.
        score: calibrated confidence in 0..1.
        label: normalised object phrase, e.g. "red block".
        source: the detector that produced it ("fused" after fusion).
        color: colour word or None.
        scores: per-source scores kept through fusion (e.g. {"color": 0.9, "owlv2": 0.4, "scene_graph": 1.0}).
        query: the query this detection answers, if it was asked for one.
        instance: simulator object name for privileged detections ("sim"), else None.
    """

    box_xyxy: tuple[float, float, float, float]
    score: float
    label: str
    source: str
    color: str | None = None
    scores: Mapping[str, float] = field(default_factory=dict)
    query: str | None = None
    instance: str | None = None

    def __post_init__(self) -> None:
        box = _floats(self.box_xyxy, 4, "box_xyxy")
        if not (box[0] < box[2] and box[1] < box[3]):
            raise ValueError(f"box_xyxy must have x0 < x1 and y0 < y1, got {box}")
        object.__setattr__(self, "box_xyxy", box)
        if not 0.0 <= float(self.score) <= 1.0:
            raise ValueError(f"score must be in 0..1, got {self.score}")
        object.__setattr__(self, "score", float(self.score))
        object.__setattr__(self, "scores", {str(k): float(v) for k, v in self.scores.items()})

    @property
    def center_uv(self) -> tuple[float, float]:
        x0, y0, x1, y1 = self.box_xyxy
        return (0.5 * (x0 + x1), 0.5 * (y0 + y1))

    @property
    def area_px(self) -> float:
        x0, y0, x1, y1 = self.box_xyxy
        return (x1 - x0) * (y1 - y0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "box_xyxy": list(self.box_xyxy),
            "score": self.score,
            "label": self.label,
            "source": self.source,
            "color": self.color,
            "scores": dict(self.scores),
            "query": self.query,
            "instance": self.instance,
        }

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> Detection:
        return Detection(
            box_xyxy=tuple(d["box_xyxy"]),
            score=float(d["score"]),
            label=str(d["label"]),
            source=str(d["source"]),
            color=d.get("color"),
            scores=dict(d.get("scores", {})),
            query=d.get("query"),
            instance=d.get("instance"),
        )


def box_iou(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    """Intersection over union of two xyxy boxes."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def mask_pixels(mask: NDArray[np.bool_]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Row and column indices of a mask's pixels (like ``np.nonzero``, but scanning only its bounding box)."""
    import cv2

    x, y, w, h = cv2.boundingRect(np.ascontiguousarray(mask, dtype=np.uint8))
    vs, us = np.nonzero(mask[y : y + h, x : x + w])
    return vs + y, us + x


def mask_box(mask: NDArray[np.bool_]) -> tuple[float, float, float, float] | None:
    """The tight xyxy box of a mask (pixel edges: x1 = last column + 1); None for an empty mask."""
    ys, xs = mask_pixels(mask)
    if xs.size == 0:
        return None
    return (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))


@dataclass(frozen=True)
class GraspPoint:
    """A 2D grasp pixel inside an object's mask.

    Attributes:
        u, v: pixel column and row.
        yaw_rad: image-plane angle (from +u towards +v) of the direction the fingers close along: the mask's
            minor principal axis, wrapped to (-pi/2, pi/2].
        category: the MALLVi A.8 category whose rule chose the point.
    """

    u: int
    v: int
    yaw_rad: float
    category: str

    def to_dict(self) -> dict[str, Any]:
        return {"u": self.u, "v": self.v, "yaw_rad": self.yaw_rad, "category": self.category}


@dataclass(frozen=True)
class Localized3D:
    """A detection lifted to a 3D target in the world frame.

    Attributes:
        detection: the 2D detection it came from.
        mask: the object's boolean mask (not serialised; ``to_dict`` keeps its area).
        grasp: the 2D grasp point.
        grasp_world: the grasp point on the object's surface, world frame (m).
        yaw_rad: world yaw (about +z, from +x) of the finger-closing direction for a top-down grasp,
            wrapped to (-pi/2, pi/2]; for square tops it is only defined modulo pi/2 and wrapped to [-pi/4, pi/4].
        position_world: estimated object centre (m).
        top_world: centre of the object's top surface (m).
        extent_m: axis-aligned world extent (dx, dy, dz) in metres.
        score: the detection's score.
        size_m: size in the object's own frame (x along ``object_yaw_rad``, y across, z up), metres.
        object_yaw_rad: world yaw of the object's x axis (its footprint rectangle's first side).
    """

    detection: Detection
    mask: NDArray[np.bool_]
    grasp: GraspPoint
    grasp_world: tuple[float, float, float]
    yaw_rad: float
    position_world: tuple[float, float, float]
    top_world: tuple[float, float, float]
    extent_m: tuple[float, float, float]
    score: float
    size_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    object_yaw_rad: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "size_m": list(self.size_m),
            "object_yaw_rad": self.object_yaw_rad,
            "detection": self.detection.to_dict(),
            "mask_area_px": int(self.mask.sum()),
            "grasp": self.grasp.to_dict(),
            "grasp_world": list(self.grasp_world),
            "yaw_rad": self.yaw_rad,
            "position_world": list(self.position_world),
            "top_world": list(self.top_world),
            "extent_m": list(self.extent_m),
            "score": self.score,
        }


@runtime_checkable
class Detector(Protocol):
    """Finds objects matching text queries (all objects it can name when ``queries`` is empty)."""

    name: str

    def detect(self, obs: Observation, queries: list[str]) -> list[Detection]: ...
