"""A ``WorldModel`` over what perception saw: how object names resolve on a real rig.

This is mallvi's one perceived-world class: on a rig the graph's runs resolve names through it (built over the
perception port's latest scan and localisations), and ``refresh()`` re-describes a camera frame on its own.

Each perceived object becomes an ``ObjectInfo`` with the simulator's named points, derived from the perceived
box (centre, size in the object's frame, yaw about world z, top): "center" and "bbox_center" (the box centre),
"top" (top centre), "bottom" (bottom centre), the functional points "fp0" (bottom centre) and "fp1" (top centre,
z pointing down), and the contact points "cp0".."cp3": top-down grasps ``GRASP_BELOW_TOP_M`` below the top
(at most to the centre) with the fingers opening along the object's yaw + 0°, 90°, 180° and -90°, as a simulated
block has them. Points a box cannot give (handles, rims, side grasps of tall objects) are not derived.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy.spatial.transform import Rotation

from mallvi.contracts.devices import Camera
from mallvi.contracts.errors import UnknownObjectError
from mallvi.contracts.geometry import Pose
from mallvi.contracts.observation import Observation
from mallvi.contracts.world_model import ObjectInfo
from mallvi.perception.pipeline import Perception
from mallvi.perception.scene_graph import PerceivedObject, SceneGraph

GRASP_BELOW_TOP_M = 0.025
"""A top-down contact point lies this far below the object's top (the simulator's blocks use the same)."""
QUARTER_TURNS_RAD = (0.0, math.pi / 2, math.pi, -math.pi / 2)


def _yaw_quat(yaw_rad: float) -> tuple[float, float, float, float]:
    return (math.cos(yaw_rad / 2.0), 0.0, 0.0, math.sin(yaw_rad / 2.0))


def _down_quat(yaw_rad: float) -> tuple[float, float, float, float]:
    """Yaw about world z, then a half turn about x (z pointing down): q_yaw * [0, 1, 0, 0]."""
    c, s = math.cos(yaw_rad / 2.0), math.sin(yaw_rad / 2.0)
    return (0.0, c, s, 0.0)


def top_down_grasp(position_m: tuple[float, float, float], finger_yaw_rad: float) -> Pose:
    """A top-down grasp frame: x (approach) straight down, y (finger opening) along ``finger_yaw_rad``."""
    x = np.array([0.0, 0.0, -1.0])
    y = np.array([math.cos(finger_yaw_rad), math.sin(finger_yaw_rad), 0.0])
    R = np.stack([x, y, np.cross(x, y)], axis=1)
    qx, qy, qz, qw = Rotation.from_matrix(R).as_quat()
    return Pose.from_arrays(position_m, [qw, qx, qy, qz])


def box_points(centre_m: tuple[float, float, float], size_m: tuple[float, float, float], yaw_rad: float,
               top_z: float | None = None) -> dict[str, Pose]:
    """The named points of a box standing on the table (see the module docstring), world frame."""
    x, y, z = centre_m
    top = top_z if top_z is not None else z + size_m[2] / 2.0
    bottom = z - (top - z)
    q = _yaw_quat(yaw_rad)
    grasp_z = top - min((top - bottom) / 2.0, GRASP_BELOW_TOP_M)
    points = {
        "center": Pose((x, y, z), q),
        "bbox_center": Pose((x, y, z), q),
        "top": Pose((x, y, top), q),
        "bottom": Pose((x, y, bottom), q),
        "fp0": Pose((x, y, bottom), q),
        "fp1": Pose((x, y, top), _down_quat(yaw_rad)),
    }
    for k, turn in enumerate(QUARTER_TURNS_RAD):
        points[f"cp{k}"] = top_down_grasp((x, y, grasp_z), yaw_rad + turn)
    return points


def object_info(obj: PerceivedObject) -> ObjectInfo:
    """The ``ObjectInfo`` of one perceived object."""
    size = obj.size_m or obj.extent_m
    top_z = obj.top_world[2] if obj.top_world is not None else None
    points = box_points(obj.position_world, size, obj.yaw_rad, top_z)
    return ObjectInfo(name=obj.id, label=obj.label, pose=points["center"], size_m=tuple(size),  # type: ignore[arg-type]
                      color=obj.color, points=points)


class PerceptionWorldModel:
    """Resolves object names to what perception last saw.

    Build it from a scene graph, with a ``Perception`` and a ``Camera`` so that ``refresh()`` takes a new
    picture and re-describes the scene, or over a live ``source`` of perceived objects (the graph's perception
    port on a rig: its latest scan, updated by every localisation).
    """

    def __init__(self, graph: SceneGraph | None = None, perception: Perception | None = None,
                 camera: Camera | None = None, source: Callable[[], Sequence[PerceivedObject]] | None = None) -> None:
        self.graph = graph or SceneGraph()
        self.perception = perception
        self.camera = camera
        self.source = source

    def _objects(self) -> Sequence[PerceivedObject]:
        return self.source() if self.source is not None else self.graph.objects

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
        return sorted(o.id for o in self._objects())

    def get_object(self, name: str) -> ObjectInfo:
        for o in self._objects():
            if o.id == name:
                return object_info(o)
        raise UnknownObjectError(f"unknown object {name!r}; perception sees {self.object_names()}")
