"""Tier 2 Hand2: handover_block."""

from __future__ import annotations

from typing import Any

from mallvi.bench.tasks.conditions import Condition, below
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, open_conditions, point

BLOCK = "red_block"
PAD = "blue_pad"


class HandoverBlock(BenchTask):
    """Pass a tall block from the left arm to the right arm and put it on the pad.

    Task Description:
        Use the left arm to grasp the red block on the table, hand it over to the right arm and place it on the
        blue pad.
    Randomizations:
        Block 0.06×0.06×0.20 m on the left; blue pad 0.1×0.1×0.01 m on the right (shared scene
        ``handover_block``).
    Success Conditions:
        The block's bottom centre within 0.03 m in x and in y and 0.01 m in z of the pad's top centre; right
        gripper open. Arm-allocation threshold 0.2 m.
    """

    name = "handover_block"
    tier = "planning"
    instruction = (
        "Use the left arm to grasp the red block on the table, handover it to the right arm and place it on "
        "the blue pad."
    )
    arm_spacing_m = 0.7
    max_turns = 10
    chunk = 8
    allocation_threshold_m = 0.2
    shared_scene = "handover_block"

    def conditions(self, world: BenchWorld) -> list[Condition]:
        d = point(world, BLOCK, "fp0") - point(world, PAD, "fp1")
        return [
            below("block bottom - pad top |dx|", abs(float(d[0])), 0.03),
            below("block bottom - pad top |dy|", abs(float(d[1])), 0.03),
            below("block bottom - pad top |dz|", abs(float(d[2])), 0.01),
            *open_conditions(world, "right"),
        ]

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        top = point(world, PAD, "fp1")
        h["targets"] = {BLOCK: [round(float(v), 4) for v in top]}
        h["handover_pose"] = [0.0, -0.05, round(world.table_top_z + 0.2, 4)]
        h["notes"] = ["Grasp the block on its side, hand it over in the middle, place its bottom on the pad."]
        return h
