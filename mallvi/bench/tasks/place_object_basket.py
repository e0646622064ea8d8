"""Tier 2 Place4: place_object_basket."""

from __future__ import annotations

from typing import Any

import numpy as np
import sapien

from mallvi.bench.tasks.conditions import Condition, above, below
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, pos, tilt_rad, yaw_pose
from mallvi.sim_bridge.objects import make_basket, make_toy
from mallvi.sim_bridge.scene_spec import SceneContents


class PlaceObjectBasket(BenchTask):
    """Put the toy into the basket, then lift the basket with the other arm.

    Task Description:
        Use one arm to grab the target object and put it in the basket, then use the other arm to grab the
        basket, and finally move the basket slightly away.
    Randomizations:
        As the original: a toy at |x| ∈ [0.20, 0.25] on a random side, y ∈ [-0.10, 0.10], turned by a yaw in
        [-π/6, π/6]; the basket (0.14×0.23×0.175 m) on the other side of the centre line at |x| = 0.02,
        y ∈ [-0.08, -0.05].
    Success Conditions:
        The basket's bottom more than 0.02 m above where it started and tilted less than 60°, the toy within
        0.15 m (L1 over x, y, z) of the basket's origin. Arm-allocation threshold 0.2 m.
    """

    name = "place_object_basket"
    tier = "planning"
    instruction = (
        "Use one arm to grab the target object and put it in the basket, then use the other arm to grab the "
        "basket, and finally move the basket slightly away."
    )
    arm_spacing_m = 0.7
    max_turns = 10
    chunk = 8
    allocation_threshold_m = 0.2

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        z = table_top_z + 0.001
        s = 1.0 if rng.random() < 0.5 else -1.0
        toy_xy = (s * float(rng.uniform(0.20, 0.25)), float(rng.uniform(-0.10, 0.10)))
        toy = make_toy(scene, "toy", yaw_pose(*toy_xy, z, float(rng.uniform(-np.pi / 6, np.pi / 6))))
        basket_p = [-s * 0.02, float(rng.uniform(-0.08, -0.05)), z]
        basket = make_basket(scene, "basket", sapien.Pose(p=basket_p))
        return SceneContents({"toy": toy, "basket": basket}, self.instruction, {})

    def conditions(self, world: BenchWorld) -> list[Condition]:
        b = pos(world, "basket")
        return [
            above("basket lifted above its start", float(b[2]) - (world.table_top_z + 0.001), 0.02),
            below("basket tilt", float(np.degrees(tilt_rad(world, "basket"))), 60.0, unit="deg"),
            below("toy - basket L1 distance", float(np.abs(pos(world, "toy") - b).sum()), 0.15),
        ]

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        c = world.objects["basket"].point_world("center").p
        h["targets"] = {"toy": [round(float(c[0]), 4), round(float(c[1]), 4), round(float(c[2]) + 0.05, 4)]}
        h["notes"] = ["Grasp the basket by the handle on the side of the free arm (contact point 0 left, 1 right)."]
        return h
