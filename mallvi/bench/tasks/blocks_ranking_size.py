"""Tier 2 Rank1: blocks_ranking_size."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import sapien

from mallvi.bench.tasks.base import BenchTask, BenchWorld, place_apart, pos
from mallvi.sim_bridge.objects import make_block
from mallvi.sim_bridge.scene_spec import SceneContents

#: half-size range per block, largest first
HALF_RANGES_M: dict[str, tuple[float, float]] = {
    "red_block": (0.030, 0.033),
    "green_block": (0.024, 0.027),
    "blue_block": (0.018, 0.021),
}
TARGET_Y_M = -0.13
TARGET_X_M: dict[str, float] = {"red_block": -0.09, "green_block": 0.0, "blue_block": 0.09}


class BlocksRankingSize(BenchTask):
    """Line three blocks up from largest (left) to smallest (right).

    Task Description:
        Move the three blocks to the centre of the table and arrange them from largest to smallest, from left
        to right.
    Randomizations:
        Half-sizes: red U[0.030, 0.033], green U[0.024, 0.027], blue U[0.018, 0.021] m; positions
        x ∈ [-0.28, 0.28], y ∈ [-0.08, 0.05], centres at least 0.1 m apart.
    Success Conditions:
        Neighbours in the row (largest–middle, middle–smallest) within |Δx| < 0.2 and |Δy| < 0.08,
        and the larger block has the smaller x.
    """

    name = "blocks_ranking_size"
    tier = "planning"
    instruction = (
        "There are three blocks on the table, move the blocks to the center of the table, and arrange them "
        "from largest to smallest, from left to right."
    )
    arm_spacing_m = 0.6
    max_turns = 10
    chunk = 8

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        xy = place_apart(rng, [((-0.28, 0.28), (-0.08, 0.05))] * 3, 0.1)
        objects = {}
        for (n, (lo, hi)), (x, y) in zip(HALF_RANGES_M.items(), xy, strict=True):
            h = float(rng.uniform(lo, hi))
            pose = sapien.Pose(p=[x, y, table_top_z + 0.001])
            objects[n] = make_block(scene, n, pose, color=n.split("_")[0], half_size_m=(h, h, h))
        return SceneContents(objects, self.instruction, {"task": self.name})

    def check_success(self, world: BenchWorld) -> bool:
        order = list(HALF_RANGES_M)  # largest first
        ps = {n: pos(world, n) for n in order}
        for a, b in pairwise(order):
            if abs(ps[a][0] - ps[b][0]) >= 0.2 or abs(ps[a][1] - ps[b][1]) >= 0.08:
                return False
        return bool(ps[order[0]][0] < ps[order[1]][0] < ps[order[2]][0])

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        z = round(world.table_top_z, 4)
        h["targets"] = {n: [x, TARGET_Y_M, z] for n, x in TARGET_X_M.items()}
        h["sizes_m"] = {n: round(world.objects[n].size_m[0], 4) for n in HALF_RANGES_M}
        return h
