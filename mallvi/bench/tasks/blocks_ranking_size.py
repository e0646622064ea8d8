"""Tier 2 Rank1: blocks_ranking_size."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import sapien

from mallvi.bench.tasks.conditions import Condition
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, place_apart, row_conditions, yaw_pose
from mallvi.sim_bridge.objects import make_block
from mallvi.sim_bridge.scene_spec import SceneContents, SceneSetupError

#: half-size range per block, largest first
HALF_RANGES_M: dict[str, tuple[float, float]] = {
    "red_block": (0.030, 0.033),
    "green_block": (0.024, 0.027),
    "blue_block": (0.018, 0.021),
}
TARGET_Y_M = -0.13
TARGET_X_M: dict[str, float] = {"red_block": -0.09, "green_block": 0.0, "blue_block": 0.09}


def _in_tight_row(xy: list[tuple[float, float]]) -> bool:
    """Whether positions (largest block first) already stand in a tight row in size order, the layouts the
    original draws again (|Δx| < 0.12 and |Δy| < 0.03 between neighbours, x increasing). Layouts that meet the
    goal's looser row but not this one are kept, as in the original: the task is then solved at the first check."""
    return all(abs(a[0] - b[0]) < 0.12 and abs(a[1] - b[1]) < 0.03 and a[0] < b[0] for a, b in pairwise(xy))


class BlocksRankingSize(BenchTask):
    """Line three blocks up from largest (left) to smallest (right).

    Task Description:
        Move the three blocks to the centre of the table and arrange them from largest to smallest, from left
        to right.
    Randomizations:
        Half-sizes: red U[0.030, 0.033], green U[0.024, 0.027], blue U[0.018, 0.021] m; positions
        x ∈ [-0.28, 0.28], y ∈ [-0.08, 0.05], yaw ±0.75 rad, centres at least 0.1 m apart; as the original, a layout
        in a tight row in size order (neighbours within 0.12 m in x and 0.03 m in y) is drawn again, one that meets
        the goal's looser row is kept.
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
        for _ in range(100):  # a layout already in a tight row is drawn again
            xy = place_apart(rng, [((-0.28, 0.28), (-0.08, 0.05))] * 3, 0.1)
            if not _in_tight_row(xy):
                break
        else:
            raise SceneSetupError("blocks_ranking_size: every layout drawn stands in a tight row already")
        objects = {}
        for (n, (lo, hi)), (x, y) in zip(HALF_RANGES_M.items(), xy, strict=True):
            h = float(rng.uniform(lo, hi))
            pose = yaw_pose(x, y, table_top_z + 0.001, float(rng.uniform(-0.75, 0.75)))
            objects[n] = make_block(scene, n, pose, color=n.split("_")[0], half_size_m=(h, h, h))
        return SceneContents(objects, self.instruction, {"task": self.name})

    def conditions(self, world: BenchWorld) -> list[Condition]:
        return row_conditions(world, tuple(HALF_RANGES_M), 0.2, 0.08)  # largest first

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        z = round(world.table_top_z, 4)
        h["targets"] = {n: [x, TARGET_Y_M, z] for n, x in TARGET_X_M.items()}
        h["sizes_m"] = {n: round(world.objects[n].size_m[0], 4) for n in HALF_RANGES_M}
        return h
