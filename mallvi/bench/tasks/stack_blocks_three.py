"""Tier 2 Stack1: stack_blocks_three."""

from __future__ import annotations

from typing import Any

import numpy as np

from mallvi.bench.tasks.conditions import Condition, below
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, open_conditions, pos

STACK_CENTER_XY = (0.0, -0.13)
ORDER = ("red_block", "green_block", "blue_block")  # bottom to top


def on_top_conditions(world: BenchWorld, upper: str, lower: str, step_m: float = 0.05) -> list[Condition]:
    """``upper`` sits on ``lower``: within (0.025, 0.025, 0.012) m of lower + step_m in z, axis by axis."""
    d = pos(world, upper) - pos(world, lower) - np.array([0.0, 0.0, step_m])
    pair = f"{upper.split('_')[0]} on {lower.split('_')[0]}"
    eps = (0.025, 0.025, 0.012)
    return [below(f"{pair} |d{axis}|", abs(float(v)), e) for axis, v, e in zip("xyz", d, eps, strict=True)]


def on_top(world: BenchWorld, upper: str, lower: str, step_m: float = 0.05) -> bool:
    """``upper`` sits on ``lower`` (every condition of ``on_top_conditions`` holds)."""
    return all(c.held for c in on_top_conditions(world, upper, lower, step_m))


class StackBlocksThree(BenchTask):
    """Stack blue on green on red.

    Task Description:
        Move the red, green and blue blocks to the centre of the table and stack the blue block on the green
        block, and the green block on the red block.
    Randomizations:
        Three 5 cm cubes at random non-overlapping positions (shared scene ``stack_blocks_three``).
    Success Conditions:
        Green within (0.025, 0.025, 0.012) m of red + 0.05 m in z, blue likewise on green; both grippers open.
    """

    name = "stack_blocks_three"
    tier = "planning"
    instruction = (
        "There are three blocks on the table, the color of the blocks is red, green and blue, move the blocks "
        "to the center of the table, and stack the blue block on the green block, and the green block on the "
        "red block."
    )
    arm_spacing_m = 0.7
    max_turns = 12
    chunk = 6
    shared_scene = "stack_blocks_three"

    def conditions(self, world: BenchWorld) -> list[Condition]:
        return [
            *on_top_conditions(world, ORDER[1], ORDER[0]),
            *on_top_conditions(world, ORDER[2], ORDER[1]),
            *open_conditions(world),
        ]

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        z0 = world.table_top_z
        h["targets"] = {n: [*STACK_CENTER_XY, round(z0 + 0.05 * i, 4)] for i, n in enumerate(ORDER)}
        h["notes"] = ["Stack at the centre (0, -0.13); each block is 0.05 m tall."]
        return h
