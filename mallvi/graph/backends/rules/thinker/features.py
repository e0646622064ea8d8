"""What the Thinker reads off a perceived object besides its box: grasp frames with the part they hold, named
functional points, whether it is a container and where its floor and opening are.

Every number comes from the object's ``SceneObject.points`` (the object model's points with simulator
perception, the geometry's otherwise; see ``perception/object_points.py``). Nothing here knows a task or a scene:
a grasp's part is the named point it lies on ("rim", "handle", "neck", "handle_left", ...), else its direction
("top" for a top-down grasp, "side", "slanted").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from mallvi.graph.schemas import PointPose, SceneObject
from mallvi.perception.query_words import CONTAINERS

PART_MATCH_M = 0.012  # a grasp frame this close to a named point holds that part
_NOT_PARTS = ("center", "bbox_center", "top", "bottom", "origin", "fp0", "fp1", "opening")


@dataclass(frozen=True)
class Grasp:
    """One grasp frame of an object: ``cp`` is its ``contact_point_id``; ``height`` its height above the object's
    bottom along the object's up axis (metres); ``approach_m`` the unit approach direction in the world,
    ``fingers_m`` the unit direction the fingers open along."""

    cp: int
    part: str
    position_m: tuple[float, float, float]
    approach_m: tuple[float, float, float]
    height: float
    fingers_m: tuple[float, float, float] = (0.0, 1.0, 0.0)

    @property
    def top_down(self) -> bool:
        return self.approach_m[2] < -0.9


def xyz(pose: PointPose) -> tuple[float, float, float]:
    return (pose[0], pose[1], pose[2])


def rotation(pose: PointPose) -> np.ndarray:
    """The 3x3 rotation of a point's frame (its quaternion is w first)."""
    w, x, y, z = pose[3:7]
    return np.asarray(Rotation.from_quat([x, y, z, w]).as_matrix(), dtype=float)


def point(obj: SceneObject, name: str) -> tuple[float, float, float] | None:
    """A named point's position, or None when perception does not know it."""
    p = obj.point(name)
    return xyz(p) if p is not None else None


def bottom_z(obj: SceneObject) -> float:
    p = point(obj, "fp0") or point(obj, "bottom")
    return p[2] if p is not None else obj.position_m[2] - obj.size_m[2] / 2


def width_m(obj: SceneObject) -> float:
    """The object's widest horizontal size by either estimate perception gives (the world extent, bounded by a
    prism's top face, is a bottle's cap; the footprint box is its body)."""
    box = obj.box_m or obj.size_m
    return float(max(obj.size_m[0], obj.size_m[1], box[0], box[1]))


def top_z(obj: SceneObject) -> float:
    return obj.position_m[2] + obj.size_m[2] / 2


def up_axis(obj: SceneObject) -> tuple[float, float, float]:
    """The object's own up axis in the world (its frame's z), world up when perception does not know it."""
    origin = obj.point("origin") or obj.point("fp0")
    if origin is None:
        return (0.0, 0.0, 1.0)
    z = rotation(origin)[:, 2]
    return (float(z[0]), float(z[1]), float(z[2]))


def yaw_rad(obj: SceneObject) -> float:
    """The object's yaw: its frame's x axis in the table plane (0 without a known frame)."""
    origin = obj.point("origin") or obj.point("fp0")
    if origin is None:
        return 0.0
    x = rotation(origin)[:, 0]
    return math.atan2(float(x[1]), float(x[0]))


def grasps(obj: SceneObject) -> list[Grasp]:
    """The object's grasp frames, in the order of their ids."""
    parts = {k: xyz(v) for k, v in obj.points.items() if not k.startswith(("cp", "fp")) and k not in _NOT_PARTS}
    base = bottom_z(obj)
    up = np.asarray(up_axis(obj))
    origin = point(obj, "fp0") or (obj.position_m[0], obj.position_m[1], base)
    out = []
    for cp in obj.grasp_ids():
        pose = obj.points[f"cp{cp}"]
        pos = xyz(pose)
        frame = rotation(pose)
        approach, fingers = frame[:, 0], frame[:, 1]
        near = min(parts.items(), key=lambda kv: math.dist(kv[1], pos), default=None)
        if near is not None and math.dist(near[1], pos) < PART_MATCH_M:
            part = near[0]
        elif approach[2] < -0.9:
            part = "top"
        elif abs(approach[2]) < 0.3:
            part = "side"
        else:
            part = "slanted"
        height = float(np.dot(np.asarray(pos) - np.asarray(origin), up))
        out.append(Grasp(cp, part, pos, (float(approach[0]), float(approach[1]), float(approach[2])), height,
                         (float(fingers[0]), float(fingers[1]), float(fingers[2]))))
    return out


def grasp_ids(obj: SceneObject, *parts: str, top_down: bool | None = None) -> list[int]:
    """Ids of the grasps on any of ``parts`` (a prefix matches: "handle" takes "handle_left"), optionally only the
    top-down ones."""
    out = []
    for g in grasps(obj):
        if parts and not any(g.part == p or g.part.startswith(p) for p in parts):
            continue
        if top_down is not None and g.top_down != top_down:
            continue
        out.append(g.cp)
    return out


def is_container(obj: SceneObject) -> bool:
    """Whether things can be put into ``obj``: perception names a container, or sees its opening."""
    return obj.label in CONTAINERS or "opening" in obj.points


def floor_z(obj: SceneObject) -> float:
    """The height an object put into ``obj`` stands on: its inner floor where the model gives it ("center" below
    the top), else 1 cm above its bottom."""
    c = point(obj, "center")
    if c is not None and c[2] < top_z(obj) - 0.005:
        return c[2]
    return bottom_z(obj) + 0.01


def drop_points(obj: SceneObject) -> dict[str, tuple[float, float, float]]:
    """Named places to put things on or into ``obj`` ("drop", "drop_left", ...), if its model has any."""
    return {k: xyz(v) for k, v in obj.points.items() if k.startswith("drop")}


def hook(obj: SceneObject) -> tuple[np.ndarray, np.ndarray] | None:
    """A hook's point and the unit direction out along its rod (towards its tip), or None."""
    h, tip = point(obj, "hook"), point(obj, "hook_tip")
    if h is None or tip is None:
        return None
    along = np.asarray(tip, dtype=float) - np.asarray(h, dtype=float)
    n = float(np.linalg.norm(along))
    return (np.asarray(h, dtype=float), along / n) if n > 1e-6 else None


def handle_yaw_rad(obj: SceneObject) -> float | None:
    """The world yaw of the direction from the object's up axis out to its handle, or None without a handle."""
    h, base = point(obj, "handle"), point(obj, "fp0")
    if h is None or base is None:
        return None
    return math.atan2(h[1] - base[1], h[0] - base[0])
