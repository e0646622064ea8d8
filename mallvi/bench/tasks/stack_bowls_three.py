"""Tier 2 Stack2: stack_bowls_three."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import sapien

from mallvi.bench.tasks.conditions import Condition, below
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, open_conditions, pos
from mallvi.sim_bridge.objects import make_bowl
from mallvi.sim_bridge.scene_spec import SceneContents, SceneSetupError

BOWLS = ("bowl1", "bowl2", "bowl3")  # bottom to top in the goal
DIAMETER_M = 0.18
HEIGHT_M = 0.052
#: the goal heights above the table top for bowl1..3 (paper: 0.74/0.77/0.81 above the floor, table top 0.74)
MAX_HEIGHT_M = (0.0 + 0.02, 0.03 + 0.02, 0.07 + 0.02)
KEEP_OUT_XY = (0.0, -0.10)  # the stacking spot stays free
MIN_SPACING_M = 0.19


def sample_bowl_positions(rng: np.random.Generator, tries: int = 2000) -> list[tuple[float, float]]:
    """Three bowl centres in the original's ranges, drawn as a whole set until one fits (SceneSetupError if not)."""
    for _ in range(tries):
        xy: list[tuple[float, float]] = []
        for _ in BOWLS:
            x = float(rng.uniform(-0.30, 0.30))
            y = float(rng.uniform(-0.15, 0.15))
            if abs(x) < 0.15 and y > 0:
                y = float(rng.uniform(-0.15, 0.0))
            fits = abs(x) >= 0.09 and np.hypot(x - KEEP_OUT_XY[0], y - KEEP_OUT_XY[1]) >= 0.13
            if not fits or any(np.hypot(x - px, y - py) < MIN_SPACING_M for px, py in xy):
                break
            xy.append((x, y))
        if len(xy) == len(BOWLS):
            return xy
    raise SceneSetupError(f"stack_bowls_three: no layout of three bowls found in {tries} draws")


class StackBowlsThree(BenchTask):
    """Nest three bowls.

    Task Description:
        Stack the three bowls on top of each other (bowl2 into bowl1, bowl3 into bowl2).
    Randomizations:
        Three bowls Ø0.18 × 0.052 m at x ∈ [-0.30, 0.30] with |x| ≥ 0.09, y ∈ [-0.15, 0.15] (y ≤ 0 where
        |x| < 0.15), at least 0.13 m from (0, -0.10); centres at least 0.19 m apart (**ours**: the original's
        0.13 m spacing is for its smaller bowls; ours are Ø0.18). A set that does not fit is drawn again whole.
    Success Conditions:
        The bowls sorted by height (any order of names): consecutive centres within 0.04 m in x and in y; the
        bottoms below table top + 0.02, 0.05 and 0.09 m (the original's 0.74/0.77/0.81 m + 0.02 with its table
        top at 0.74 m); both grippers open.
    """

    name = "stack_bowls_three"
    tier = "planning"
    instruction = "Stack the three bowls on top of each other."
    arm_spacing_m = 0.7
    max_turns = 12
    chunk = 5

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        xy = sample_bowl_positions(rng)
        colors = ("white", "beige", "grey")
        objects = {
            n: make_bowl(
                scene, n, sapien.Pose(p=[x, y, table_top_z + 0.001]), color=c, diameter_m=DIAMETER_M, height_m=HEIGHT_M
            )
            for n, c, (x, y) in zip(BOWLS, colors, xy, strict=True)
        }
        return SceneContents(objects, self.instruction, {"task": self.name})

    def conditions(self, world: BenchWorld) -> list[Condition]:
        by_height = sorted(BOWLS, key=lambda n: float(pos(world, n)[2]))  # any bowl may be at the bottom
        ps = [pos(world, n) for n in by_height]
        out = []
        for i, (lower, upper) in enumerate(pairwise(ps)):
            d = upper - lower
            out += [below(f"bowls {i + 1}-{i + 2} from below |dx|", abs(float(d[0])), 0.04),
                    below(f"bowls {i + 1}-{i + 2} from below |dy|", abs(float(d[1])), 0.04)]  # fmt: skip
        for i, (p, h) in enumerate(zip(ps, MAX_HEIGHT_M, strict=True)):
            out.append(below(f"bowl {i + 1} from below, height above table top", float(p[2]) - world.table_top_z, h))
        return [*out, *open_conditions(world)]

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        h["notes"] = ["Grasp a bowl by its rim; put bowl2 into bowl1 and bowl3 into bowl2."]
        return h
