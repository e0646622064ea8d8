"""Tier 3 Place8: place_object_scale."""

from __future__ import annotations

from typing import Any

import numpy as np
import sapien

from mallvi.bench.tasks.base import BenchTask, BenchWorld, grippers_open, point, pos
from mallvi.sim_bridge.objects import make_block, make_scale
from mallvi.sim_bridge.scene_spec import SceneContents


class PlaceObjectScale(BenchTask):
    """Put the object onto the kitchen scale (16-dim EE actions).

    Task Description:
        Use one arm to grab the object and put it on the scale.
    Randomizations:
        A 4 cm orange block at |x| ∈ [0.12, 0.22] on a random side, y ∈ [-0.12, 0.0]; the scale (0.16 m) on the
        same side at |x| ∈ [0.0, 0.06], y ∈ [-0.12, -0.06]. **Ours**: a block instead of the original's assorted
        meshes (Ø0.10-0.13 m), which our gripper could not span.
    Success Conditions:
        The object within 0.035 m (xy) of the scale's top centre, its bottom less than 0.01 m above the plate,
        both grippers open.
    """

    name = "place_object_scale"
    tier = "fine"
    instruction = "Use one arm to grab the object and put it on the scale."
    arm_spacing_m = 0.7
    max_turns = 5
    chunk = 6

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        z = table_top_z + 0.001
        s = 1.0 if rng.random() < 0.5 else -1.0
        obj_p = [s * float(rng.uniform(0.12, 0.22)), float(rng.uniform(-0.12, 0.0)), z]
        obj = make_block(scene, "object", sapien.Pose(p=obj_p), color="orange", half_size_m=(0.02, 0.02, 0.02))
        scale_p = [s * float(rng.uniform(0.0, 0.06)), float(rng.uniform(-0.12, -0.06)), z]
        scale = make_scale(scene, "scale", sapien.Pose(p=scale_p), static=True)
        return SceneContents({"object": obj, "scale": scale}, self.instruction, {})

    def check_success(self, world: BenchWorld) -> bool:
        top = point(world, "scale", "top")
        d = pos(world, "object") - top
        return bool(np.hypot(d[0], d[1]) < 0.035 and d[2] < 0.01) and grippers_open(world)

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        h["targets"] = {"object": [round(float(v), 4) for v in point(world, "scale", "top")]}
        return h
