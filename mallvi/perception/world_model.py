"""A ``WorldModel`` over the Descriptor's scene graph: how object names resolve on a real rig.

Each scene-graph object becomes an ``ObjectInfo``: its pose is the perceived centre with the footprint's yaw,
``size_m`` is in that frame, and its points follow the simulator's conventions: "center", "top" (top centre),
"fp0" (bottom centre) and "fp1" (top centre with z pointing down, quaternion [0, 1, 0, 0] about the yaw).
"""

from __future__ import annotations

import math

from mallvi.contracts.devices import Camera
from mallvi.contracts.errors import UnknownObjectError
from mallvi.contracts.geometry import Pose
from mallvi.contracts.observation import Observation
from mallvi.contracts.world_model import ObjectInfo
from mallvi.perception.pipeline import Perception
from mallvi.perception.scene_graph import SceneGraph, SceneObject


def _yaw_quat(yaw_rad: float) -> tuple[float, float, float, float]:
    return (math.cos(yaw_rad / 2.0), 0.0, 0.0, math.sin(yaw_rad / 2.0))


def _down_quat(yaw_rad: float) -> tuple[float, float, float, float]:
    """Yaw about world z, then a half turn about x (z pointing down): q_yaw * [0, 1, 0, 0]."""
    c, s = math.cos(yaw_rad / 2.0), math.sin(yaw_rad / 2.0)
    return (0.0, c, s, 0.0)


def object_info(obj: SceneObject) -> ObjectInfo:
    """The ``ObjectInfo`` of one scene-graph object."""
    x, y, z = obj.position_world
    size = obj.size_m or obj.extent_m
    top_z = obj.top_world[2] if obj.top_world is not None else z + size[2] / 2.0
    bottom_z = z - (top_z - z)
    q = _yaw_quat(obj.yaw_rad)
    points = {
        "center": Pose((x, y, z), q),
        "top": Pose((x, y, top_z), q),
        "fp0": Pose((x, y, bottom_z), q),
        "fp1": Pose((x, y, top_z), _down_quat(obj.yaw_rad)),
    }
    return ObjectInfo(name=obj.id, label=obj.label, pose=Pose((x, y, z), q), size_m=tuple(size),  # type: ignore[arg-type]
                      color=obj.color, points=points)


class PerceptionWorldModel:
    """Resolves object names to what perception last saw.

    Build it from a scene graph, or with a ``Perception`` and a ``Camera`` so that ``refresh()`` takes a new
    picture and re-describes the scene (the Descriptor's re-scan).
    """

    def __init__(self, graph: SceneGraph | None = None, perception: Perception | None = None,
                 camera: Camera | None = None) -> None:
        self.graph = graph or SceneGraph()
        self.perception = perception
        self.camera = camera

    def update(self, graph: SceneGraph) -> None:
        """Replace the scene graph (e.g. with the Descriptor's latest)."""
        self.graph = graph

    def refresh(self, obs: Observation | None = None) -> SceneGraph:
        """Describe ``obs`` (or a new camera frame) and keep the result; ValueError without perception/camera."""
        if self.perception is None:
            raise ValueError("refresh needs the Perception this world model was built with")
        if obs is None:
            if self.camera is None:
                raise ValueError("refresh without an observation needs a camera")
            obs = self.camera.read()
        self.graph = self.perception.describe(obs)
        return self.graph

    def object_names(self) -> list[str]:
        return sorted(o.id for o in self.graph.objects)

    def get_object(self, name: str) -> ObjectInfo:
        for o in self.graph.objects:
            if o.id == name:
                return object_info(o)
        raise UnknownObjectError(f"unknown object {name!r}; perception sees {self.object_names()}")
