"""Tier 2 Rank2: blocks_ranking_rgb."""

from __future__ import annotations

from typing import Any

from mallvi.bench.tasks.conditions import Condition
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, open_conditions, row_conditions

ORDER = ("red_block", "green_block", "blue_block")
TARGET_Y_M = -0.13
TARGET_X_M: dict[str, float] = {"red_block": -0.09, "green_block": 0.0, "blue_block": 0.09}


class BlocksRankingRgb(BenchTask):
    """Line the red, green and blue blocks up from left to right.

    Task Description:
        Place the red block, green block, and blue block in the order of red, green, and blue from left to
        right, placing in a row.
    Randomizations:
        Three equal cubes (half-size U[0.015, 0.025] m) at x ∈ [-0.28, 0.28] (shared scene
        ``blocks_ranking_rgb``).
    Success Conditions:
        Neighbours in the row (red–green, green–blue) within |Δx| < 0.13 and |Δy| < 0.03;
        red x < green x < blue x; both grippers open.
    """

    name = "blocks_ranking_rgb"
    tier = "planning"
    instruction = (
        "Place the red block, green block, and blue block in the order of red, green, and blue from left to "
        "right, placing in a row."
    )
    arm_spacing_m = 0.6
    max_turns = 10
    chunk = 10
    shared_scene = "blocks_ranking_rgb"

    def conditions(self, world: BenchWorld) -> list[Condition]:
        return [*row_conditions(world, ORDER, 0.13, 0.03), *open_conditions(world)]

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        z = round(world.table_top_z, 4)
        h["targets"] = {n: [x, TARGET_Y_M, z] for n, x in TARGET_X_M.items()}
        return h
