"""Tier 3 Place8: place_object_scale."""

from __future__ import annotations

from typing import Any

import numpy as np
import sapien

from mallvi.bench.tasks.conditions import Condition, below
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, open_conditions, point, pos, yaw_pose
from mallvi.sim_bridge.objects import make_block, make_scale
from mallvi.sim_bridge.scene_spec import SceneContents, SceneSetupError


class PlaceObjectScale(BenchTask):
    """Put the object onto the kitchen scale (16-dim EE actions).

    Task Description:
        Use one arm to grab the object and put it on the scale.
    Randomizations:
        A 4 cm orange block at |x| ∈ [0.02, 0.25] on a random side, y ∈ [-0.20, 0.05], any yaw; the scale
        (0.16 m, any yaw) on the same side in the same ranges, at least 0.15 m from the block. **Ours**: a block
        instead of the original's assorted meshes (Ø0.10-0.13 m), which our gripper could not span.
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
        ox, oy = s * float(rng.uniform(0.02, 0.25)), float(rng.uniform(-0.20, 0.05))
        for _ in range(1000):  # the scale on the object's side, at least 0.15 m from it
            sx, sy = s * float(rng.uniform(0.02, 0.25)), float(rng.uniform(-0.20, 0.05))
            if np.hypot(sx - ox, sy - oy) >= 0.15:
                break
        else:
            raise SceneSetupError("place_object_scale: no spot for the scale 0.15 m from the object")
        obj = make_block(scene, "object", yaw_pose(ox, oy, z, float(rng.uniform(-np.pi, np.pi))), color="orange",
                         half_size_m=(0.02, 0.02, 0.02))  # fmt: skip
        scale = make_scale(scene, "scale", yaw_pose(sx, sy, z, float(rng.uniform(-np.pi, np.pi))), static=True)
        return SceneContents({"object": obj, "scale": scale}, self.instruction, {})

    def conditions(self, world: BenchWorld) -> list[Condition]:
        d = pos(world, "object") - point(world, "scale", "top")
        return [
            below("object - scale top distance (xy)", float(np.hypot(d[0], d[1])), 0.035),
            below("object bottom above the scale's top", float(d[2]), 0.01),
            *open_conditions(world),
        ]

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        h["targets"] = {"object": [round(float(v), 4) for v in point(world, "scale", "top")]}
        return h
