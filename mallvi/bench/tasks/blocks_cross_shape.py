"""Tier 2 Place2: blocks_cross_shape."""

from __future__ import annotations

from typing import Any

import numpy as np
import sapien

from mallvi.bench.tasks.conditions import Condition, below
from mallvi.bench.tasks.task_base import (
    BenchTask,
    BenchWorld,
    open_conditions,
    place_apart,
    pos,
    side_range,
    yaw_pose,
)
from mallvi.sim_bridge.objects import make_block
from mallvi.sim_bridge.scene_spec import SceneContents

HALF_M = 0.025
#: target xy per block (the benchmark's cross around (0, -0.15))
TARGETS_XY: dict[str, tuple[float, float]] = {
    "red_block": (-0.12, -0.15),
    "blue_block": (0.12, -0.15),
    "black_block": (0.0, -0.15),
    "green_block": (0.0, -0.03),
    "yellow_block": (0.0, -0.27),
}


class BlocksCrossShape(BenchTask):
    """Arrange five blocks into a cross.

    Task Description:
        Move the five blocks to the centre of the table and arrange them into a cross: red left, black centre,
        blue right, green inside (away from the robot), yellow closest to the robot.
    Randomizations:
        Five 5 cm cubes; red on the left, blue on the right, the others on a random side each; |x| ∈ [0.15, 0.30],
        y ∈ [-0.16, 0.10], centres at least 0.08 m apart; each turned by a yaw in [-0.75, 0.75] rad (as the
        original).
    Success Conditions:
        Every block within 0.02 m (in x and in y) of its target (TARGETS_XY); both grippers open.
    """

    name = "blocks_cross_shape"
    tier = "planning"
    instruction = (
        "There are five blocks on the table, move the blocks to the center of the table, and arrange them to a "
        "cross shape. The red block should be on the left. The black block should be on the center. The blue "
        "block should be on the right. The green should be inside. The yellow should be closest to you."
    )
    arm_spacing_m = 0.6
    max_turns = 10
    chunk = 8

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        sides = {"red_block": "left", "blue_block": "right"}
        names = list(TARGETS_XY)
        ranges = [(side_range(rng, 0.15, 0.30, sides.get(n)), (-0.16, 0.10)) for n in names]
        xy = place_apart(rng, ranges, 0.08)
        objects = {
            n: make_block(scene, n, yaw_pose(x, y, table_top_z + 0.001, float(rng.uniform(-0.75, 0.75))),
                          color=n.split("_")[0], half_size_m=(HALF_M,) * 3)
            for n, (x, y) in zip(names, xy, strict=True)
        }  # fmt: skip
        return SceneContents(objects, self.instruction, {"task": self.name})

    def conditions(self, world: BenchWorld) -> list[Condition]:
        out = []
        for n, (tx, ty) in TARGETS_XY.items():
            p = pos(world, n)
            out += [below(f"{n} - target |dx|", abs(float(p[0]) - tx), 0.02),
                    below(f"{n} - target |dy|", abs(float(p[1]) - ty), 0.02)]  # fmt: skip
        return [*out, *open_conditions(world)]

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        z = round(world.table_top_z, 4)
        h["targets"] = {n: [tx, ty, z] for n, (tx, ty) in TARGETS_XY.items()}
        return h
