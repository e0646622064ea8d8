"""Tier 3 Stack3: stack_blocks_two."""

from __future__ import annotations

from typing import Any

from mallvi.bench.tasks.conditions import Condition
from mallvi.bench.tasks.stack_blocks_three import STACK_CENTER_XY, on_top_conditions
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, open_conditions


class StackBlocksTwo(BenchTask):
    """Stack one block on the other (16-dim EE actions).

    Task Description:
        Move the red and green blocks to the centre of the table and stack them.
    Randomizations:
        Two 5 cm cubes at random non-overlapping positions (shared scene ``stack_blocks_two``).
    Success Conditions:
        Either block within (0.025, 0.025, 0.012) m of the other + 0.05 m in z; both grippers open.
    """

    name = "stack_blocks_two"
    tier = "fine"
    instruction = (
        "There are two blocks on the table, the color of the blocks is red, green, move the blocks to the "
        "center of the table, and stack the blocks."
    )
    arm_spacing_m = 0.7
    max_turns = 8
    chunk = 9
    shared_scene = "stack_blocks_two"

    def conditions(self, world: BenchWorld) -> list[Condition]:
        green_on_red = on_top_conditions(world, "green_block", "red_block")
        red_on_green = on_top_conditions(world, "red_block", "green_block")
        best = min((green_on_red, red_on_green), key=lambda cs: sum(not c.held for c in cs))  # either order
        return [*best, *open_conditions(world)]

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        h["stack_center"] = [*STACK_CENTER_XY, round(world.table_top_z, 4)]
        return h
