"""Tier 2 Place7: put_bottles_dustbin."""

from __future__ import annotations

from typing import Any

import numpy as np
import sapien

from mallvi.bench.tasks.conditions import Condition, below
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, place_apart, point, pos
from mallvi.sim_bridge.objects import make_bottle, make_dustbin
from mallvi.sim_bridge.scene_spec import SceneContents

BOTTLES = ("bottle1", "bottle2", "bottle3")
BIN_SIZE_M = (0.20, 0.30, 0.08)
BIN_XY = (-0.38, -0.05)


class PutBottlesDustbin(BenchTask):
    """Throw the three bottles into the bin at the left of the table.

    Task Description:
        Use arms to grab the bottles and put them into the dustbin to the left of the table. Bottles on the
        right must be passed to the left arm.
    Randomizations:
        Three bottles (radius U[0.035, 0.043] m, height U[0.22, 0.25] m) at x ∈ [-0.15, 0.25], y ∈ [-0.15, 0.05],
        at least 0.1 m apart. **Ours**: the bin (0.20×0.30×0.08 m, static) stands on the table's left part at
        (-0.38, -0.05) — our table cannot shift right as the original's does to make room for a floor bin; its
        rim is 0.08 m high because a bottle held by the neck above a higher rim is beyond the raised arm's reach.
    Success Conditions:
        Every bottle's bottom centre inside the bin's footprint and below its rim.
    """

    name = "put_bottles_dustbin"
    tier = "planning"
    instruction = "Use arms to grab the bottles and put them into the dustbin to the left of the table."
    arm_spacing_m = 0.7
    max_turns = 12
    chunk = 15

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        z = table_top_z + 0.001
        dustbin = make_dustbin(scene, "dustbin", sapien.Pose(p=[*BIN_XY, z]), size_m=BIN_SIZE_M)
        objects = {"dustbin": dustbin}
        for n, (x, y) in zip(BOTTLES, place_apart(rng, [((-0.15, 0.25), (-0.15, 0.05))] * 3, 0.1), strict=True):
            r, h = float(rng.uniform(0.035, 0.043)), float(rng.uniform(0.22, 0.25))
            objects[n] = make_bottle(scene, n, sapien.Pose(p=[x, y, z]), radius_m=r, height_m=h)
        return SceneContents(objects, self.instruction, {})

    def conditions(self, world: BenchWorld) -> list[Condition]:
        b = pos(world, "dustbin")
        rim_z = float(b[2]) + BIN_SIZE_M[2]
        out = []
        for n in BOTTLES:
            d = pos(world, n) - b
            out += [below(f"{n} - bin |dx|", abs(float(d[0])), BIN_SIZE_M[0] / 2),
                    below(f"{n} - bin |dy|", abs(float(d[1])), BIN_SIZE_M[1] / 2),
                    below(f"{n} bottom below the rim", float(d[2]), rim_z - float(b[2]))]  # fmt: skip
        return out

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        drop = point(world, "dustbin", "drop")
        h["drop_point"] = [round(float(drop[0]), 4), round(float(drop[1]), 4), round(float(drop[2]) + 0.30, 4)]
        h["notes"] = ["Release each bottle above the bin; the right arm hands its bottles to the left arm."]
        return h
