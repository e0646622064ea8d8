"""Named points of a perceived object: what acting on it needs besides its centre and size.

From the simulator (privileged, ``--perception sim``): the object model's own points as the camera frame carries
them (``Observation.seg_points``) — grasp frames ("cp0".."cpN": x = approach, y = finger opening), functional
points ("fp0" bottom centre, "fp1" top centre), parts ("handle", "rim", "neck", "head", "hook", "hook_tip",
"drop", ...) and the object's frame ("origin"). From colour and depth: what the geometry tells — the top and
bottom centres and, for a container, its opening — and nothing else. Every point is ``[x, y, z, qw, qx, qy,
qz]`` in the world frame.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from mallvi.contracts.observation import Observation
from mallvi.perception.query_words import CONTAINERS
from mallvi.perception.types import Detection

MODEL_SOURCE = "object model (simulator, privileged)"
GEOMETRY_SOURCE = "geometry"


def model_points(obs: Observation, detection: Detection) -> dict[str, tuple[float, ...]] | None:
    """The simulator's named points of the object a privileged detection stands for, or None."""
    if detection.instance is None:
        return None
    pts = obs.seg_points.get(detection.instance)
    return {k: tuple(float(x) for x in v) for k, v in pts.items()} if pts else None


def geometry_points(position_m: tuple[float, float, float], extent_m: tuple[float, float, float],
                    top_m: tuple[float, float, float] | None, yaw_rad: float,
                    label: str) -> dict[str, tuple[float, ...]]:
    """The points the perceived geometry gives: "top" and "bottom" centres (turned by the object's yaw) and a
    container's "opening" (its top centre, pointing up)."""
    q = (math.cos(yaw_rad / 2), 0.0, 0.0, math.sin(yaw_rad / 2))
    x, y, z = position_m
    top_z = top_m[2] if top_m is not None else z + extent_m[2] / 2
    bottom_z = z - extent_m[2] / 2
    points: dict[str, tuple[float, ...]] = {"top": (x, y, top_z, *q), "bottom": (x, y, bottom_z, *q)}
    if label in CONTAINERS:
        points["opening"] = (x, y, top_z, *q)
    return points


def points_of(obs: Observation, detection: Detection, position_m: tuple[float, float, float],
              extent_m: tuple[float, float, float], top_m: tuple[float, float, float] | None, yaw_rad: float,
              label: str) -> tuple[Mapping[str, tuple[float, ...]], str]:
    """(points, where they come from): the model's where the simulator gives them, else the geometry's."""
    model = model_points(obs, detection)
    if model is not None:
        return model, MODEL_SOURCE
    return geometry_points(position_m, extent_m, top_m, yaw_rad, label), GEOMETRY_SOURCE
