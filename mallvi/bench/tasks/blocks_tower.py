"""Tier 2 Place6: blocks_tower."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import sapien

from mallvi.bench.tasks.conditions import Condition, below
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, open_conditions, pos
from mallvi.sim_bridge.objects import make_block
from mallvi.sim_bridge.scene_spec import SceneContents

#: edge length per block, largest first (= the goal tower from bottom to top)
EDGES_M: dict[str, float] = {"red_block": 0.064, "blue_block": 0.056, "yellow_block": 0.048, "green_block": 0.040}
COLUMNS = (("red_block", "yellow_block"), ("blue_block", "green_block"))  # bottom, top
TOWER_XY = (0.0, -0.12)


class BlocksTower(BenchTask):
    """Rebuild two small stacks into one tower, largest at the bottom.

    Task Description:
        Move the four blocks to the centre of the table and stack them into a tower from largest to smallest,
        from bottom to top (red, blue, yellow, green).
    Randomizations:
        Two pre-stacked columns — red (0.064 m) under yellow (0.048 m), blue (0.056 m) under green (0.040 m) —
        on opposite sides (which column goes left is random), |x| ∈ [0.15, 0.25], y ∈ [-0.10, 0.05].
    Success Conditions:
        Consecutive blocks of red–blue–yellow–green within 0.05 m in x and in y; red |x| < 0.03; both grippers
        open (as the original: no check of the height order).
    """

    name = "blocks_tower"
    tier = "planning"
    instruction = (
        "There are four blocks on the table, move the blocks to the center of the table, and stack them to a "
        "block tower from largest to smallest, from bottom to top."
    )
    arm_spacing_m = 0.6
    max_turns = 12
    chunk = 10

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        first_left = rng.random() < 0.5
        objects = {}
        for i, (bottom, top) in enumerate(COLUMNS):
            s = -1.0 if (i == 0) == first_left else 1.0
            x, y = s * float(rng.uniform(0.15, 0.25)), float(rng.uniform(-0.10, 0.05))
            z = table_top_z + 0.001
            for n in (bottom, top):
                h = EDGES_M[n] / 2
                objects[n] = make_block(
                    scene, n, sapien.Pose(p=[x, y, z]), color=n.split("_")[0], half_size_m=(h, h, h)
                )
                z += EDGES_M[n] + 0.001
        return SceneContents(objects, self.instruction, {})

    def conditions(self, world: BenchWorld) -> list[Condition]:
        ps = {n: pos(world, n) for n in EDGES_M}
        out = [below("red |x|", abs(float(ps["red_block"][0])), 0.03)]
        for lower, upper in pairwise(EDGES_M):
            d = ps[upper] - ps[lower]
            short = f"{lower.split('_')[0]}-{upper.split('_')[0]}"
            out += [below(f"{short} |dx|", abs(float(d[0])), 0.05), below(f"{short} |dy|", abs(float(d[1])), 0.05)]
        return [*out, *open_conditions(world)]

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        z, targets = world.table_top_z, {}
        for n, edge in EDGES_M.items():
            targets[n] = [*TOWER_XY, round(z, 4)]
            z += edge
        h["targets"] = targets
        h["sizes_m"] = dict(EDGES_M)
        return h
