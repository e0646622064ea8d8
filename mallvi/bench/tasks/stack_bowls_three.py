"""Tier 2 Stack2: stack_bowls_three."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import sapien

from mallvi.bench.tasks.base import BenchTask, BenchWorld, grippers_open, place_apart, pos
from mallvi.sim_bridge.objects import make_bowl
from mallvi.sim_bridge.scene_spec import SceneContents

BOWLS = ("bowl1", "bowl2", "bowl3")  # bottom to top in the goal
DIAMETER_M = 0.18
HEIGHT_M = 0.052
#: the goal heights above the table top for bowl1..3 (paper: 0.74/0.77/0.81 above the floor, table top 0.74)
MAX_HEIGHT_M = (0.0 + 0.02, 0.03 + 0.02, 0.07 + 0.02)


class StackBowlsThree(BenchTask):
    """Nest three bowls.

    Task Description:
        Stack the three bowls on top of each other (bowl2 into bowl1, bowl3 into bowl2).
    Randomizations:
        Three bowls Ø0.18 × 0.052 m at x ∈ [-0.25, 0.25], y ∈ [-0.15, 0.05], centres at least 0.19 m apart.
    Success Conditions:
        Consecutive bowls' centres within 0.04 m (xy); bowl1, bowl2, bowl3 bottoms below table top + 0.02, 0.05
        and 0.09 m; both grippers open.
    """

    name = "stack_bowls_three"
    tier = "planning"
    instruction = "Stack the three bowls on top of each other."
    arm_spacing_m = 0.7
    max_turns = 12
    chunk = 5

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        xy = place_apart(rng, [((-0.25, 0.25), (-0.15, 0.05))] * 3, 0.19)
        colors = ("white", "beige", "grey")
        objects = {
            n: make_bowl(
                scene, n, sapien.Pose(p=[x, y, table_top_z + 0.001]), color=c, diameter_m=DIAMETER_M, height_m=HEIGHT_M
            )
            for n, c, (x, y) in zip(BOWLS, colors, xy, strict=True)
        }
        return SceneContents(objects, self.instruction, {"task": self.name})

    def check_success(self, world: BenchWorld) -> bool:
        ps = [pos(world, n) for n in BOWLS]
        for lower, upper in pairwise(ps):
            if float(np.hypot(*(upper - lower)[:2])) >= 0.04:
                return False
        top = world.table_top_z
        if any(float(p[2]) >= top + h for p, h in zip(ps, MAX_HEIGHT_M, strict=True)):
            return False
        return grippers_open(world)

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        h["notes"] = ["Grasp a bowl by its rim; put bowl2 into bowl1 and bowl3 into bowl2."]
        return h
