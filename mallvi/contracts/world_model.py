"""What a world model tells about objects: names resolved to world-frame poses, sizes and named points."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from mallvi.contracts.geometry import Pose


@dataclass(frozen=True)
class ObjectInfo:
    """What the world model knows about one object, in the world frame.

    ``points`` are the object's named functional/contact points (e.g. "top", "bottom", "handle", "hook"),
    as world-frame poses. This is what the skills act on, from simulator truth or from perception alike; it is
    not the graph's ``SceneObject`` (what the agents reason about), which has no pose or points.
    """

    name: str
    label: str
    pose: Pose
    size_m: tuple[float, float, float]
    color: str | None = None
    points: Mapping[str, Pose] = field(default_factory=dict)


@runtime_checkable
class WorldModel(Protocol):
    """Resolves object names: simulator truth in benchmark mode, the perception scene graph on a real rig."""

    def object_names(self) -> list[str]: ...

    def get_object(self, name: str) -> ObjectInfo:
        """Raises UnknownObjectError for a name it does not know."""
        ...
