"""One rendered frame of a scene with its simulator truth, for looking at perception alone (``mallvi perceive``)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mallvi.contracts.observation import Observation
from mallvi.sim_bridge.scene_spec import SceneSpec
from mallvi.sim_bridge.scenes import get_scene
from mallvi.sim_bridge.world import SimWorld

#: the fixed cameras a snapshot can be taken with
SNAPSHOT_CAMERAS = ("head", "front")


class TruthFrame(NamedTuple):
    """A frame and, per simulator object, its centre in the world frame (metres; privileged simulator truth)."""

    obs: Observation
    centres_m: dict[str, tuple[float, float, float]]


def truth_frame(scene: str | SceneSpec, seed: int, camera: str = "head") -> TruthFrame:
    """Build ``scene`` (a registered name, or a spec such as a benchmark task's) at ``seed``, render ``camera``
    once and read every object's centre.

    Raises ValueError for an unknown camera and KeyError for an unknown scene, before anything is built.
    """
    if camera not in SNAPSHOT_CAMERAS:
        raise ValueError(f"unknown camera {camera!r}; choose one of {list(SNAPSHOT_CAMERAS)}")
    if isinstance(scene, str):
        get_scene(scene)
    with SimWorld.create(scene, seed, cameras=(camera,)) as world:
        obs = world.observe(camera)
        centres: dict[str, tuple[float, float, float]] = {}
        for name in world.truth.object_names():
            info = world.truth.get_object(name)
            p = np.asarray(info.points["center"].position_m if "center" in info.points else info.pose.position_m)
            centres[name] = (float(p[0]), float(p[1]), float(p[2]))
    return TruthFrame(obs, centres)
