"""Tier 2 Place5 / Tier 3 Place10: place_bread_skillet."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import sapien

from mallvi.bench.tasks.conditions import Condition, above, above_original_table, below
from mallvi.bench.tasks.rig_clearance import bar_outline, clear_of_pedestals, disc_outline
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, point, pos, yaw_pose
from mallvi.bench.tiers import TierName
from mallvi.sim_bridge.objects import make_bread, make_skillet
from mallvi.sim_bridge.scene_spec import SceneContents, SceneSetupError

#: the skillet as make_skillet builds it by default: the pan's outer diameter and the handle's length (metres)
SKILLET_DIAMETER_M = 0.20
SKILLET_HANDLE_M = 0.12


class PlaceBreadSkillet(BenchTask):
    """Put the bread into the skillet.

    Task Description:
        If there is one bread on the table, use one arm to grab the bread and put it into the skillet.
    Randomizations:
        Bread (0.12 m loaf) at |x| ∈ [0.20, 0.28] on a random side, y ∈ [-0.20, 0.05], yaw ±π/4; skillet (Ø0.20
        pan with a 0.12 m handle pointing outwards, yaw ±π/6) on the other side at |x| ∈ [0.15, 0.25],
        y ∈ [-0.20, 0.05]: one arm brings the skillet over, the other puts the bread in. A skillet pose whose pan
        or handle would stand in an arm's pedestal (ours; the original's arms stand off the table) is redrawn.
    Success Conditions:
        The bread within 0.035 m of the pan's centre in x and in y; the pan's centre and the bread above table
        top - 0.02 m (not fallen; the original's 0.72 m with its table top at 0.74 m).
    """

    name = "place_bread_skillet"
    tier: ClassVar[TierName] = "planning"
    instruction = "If there is one bread on the table, use one arm to grab the bread and put it into the skillet."
    arm_spacing_m = 0.7
    max_turns = 6
    chunk = 5
    #: the original's height threshold above its floor for bread and pan centre (metres)
    min_height_original_m = 0.72
    #: the skillet's yaw range (radians) either side of "handle pointing outwards"
    skillet_yaw_rad = math.pi / 6

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        z = table_top_z + 0.001
        s = 1.0 if rng.random() < 0.5 else -1.0  # the bread's side
        bread_pose = yaw_pose(
            s * float(rng.uniform(0.20, 0.28)), float(rng.uniform(-0.20, 0.05)), z, rng.uniform(-np.pi / 4, np.pi / 4)
        )
        bread = make_bread(scene, "bread", bread_pose)
        pan_x, pan_y, yaw = self._skillet_xy_yaw(rng, s)
        pose = yaw_pose(pan_x, pan_y, z, yaw)
        skillet = make_skillet(scene, "skillet", pose, diameter_m=SKILLET_DIAMETER_M, handle_length_m=SKILLET_HANDLE_M)
        bread_arm = "left" if s < 0 else "right"
        meta = {"bread_arm": bread_arm, "skillet_arm": "right" if s < 0 else "left"}
        return SceneContents({"bread": bread, "skillet": skillet}, self.instruction, meta)

    def _skillet_xy_yaw(
        self, rng: np.random.Generator, bread_side: float, tries: int = 100
    ) -> tuple[float, float, float]:
        """The skillet's centre (x, y) and yaw on the side away from the bread, redrawn while the pan or its handle
        would stand in an arm's pedestal (our rig's, not the original's: the physics throws it at the first step)."""
        outwards = 0.0 if bread_side < 0 else np.pi  # the handle (+x of the pan) points away from the bread
        for _ in range(tries):
            x = -bread_side * float(rng.uniform(0.15, 0.25))
            y = float(rng.uniform(-0.20, 0.05))
            yaw = outwards + float(rng.uniform(-self.skillet_yaw_rad, self.skillet_yaw_rad))
            r = SKILLET_DIAMETER_M / 2
            outline = disc_outline(x, y, r) + bar_outline(x, y, yaw, r, r + SKILLET_HANDLE_M, 0.01)
            if clear_of_pedestals(outline, self.arm_spacing_m):
                return x, y, float(yaw)
        raise SceneSetupError(f"no skillet pose clear of the pedestals after {tries} draws")

    def conditions(self, world: BenchWorld) -> list[Condition]:
        bread, centre = pos(world, "bread"), point(world, "skillet", "center")
        d = bread - centre
        z_min = above_original_table(self.min_height_original_m)
        return [
            below("bread-pan centre |dx|", abs(float(d[0])), 0.035),
            below("bread-pan centre |dy|", abs(float(d[1])), 0.035),
            above("pan centre above table top", float(centre[2]) - world.table_top_z, z_min),
            above("bread above table top", float(bread[2]) - world.table_top_z, z_min),
        ]

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        bread_x = float(pos(world, "bread")[0])
        pan_target_x = 0.03 if bread_x > 0 else -0.03
        h["skillet_target"] = [pan_target_x, -0.10, round(world.table_top_z, 4)]
        h["targets"] = {"bread": [round(float(v), 4) for v in point(world, "skillet", "center")]}
        skillet_arm = "left" if bread_x > 0 else "right"
        h["notes"] = [
            f"The skillet starts on the {skillet_arm} side: grasp it by its handle (contact point 0) with the "
            f"{skillet_arm} arm and put it down near the centre (skillet_target), then put the bread into it "
            "with the other arm."
        ]
        return h


class PlaceBreadSkilletEE(PlaceBreadSkillet):
    """Tier 3 Place10: place_bread_skillet with 16-dim end-effector actions.

    Task Description:
        If there is one bread on the table, move the skillet to the centre and use one arm to grab the bread and
        put it into the skillet (16-dim EE actions).
    Randomizations:
        As Tier 2 place_bread_skillet, but the skillet keeps its handle pointing straight outwards (no yaw).
    Success Conditions:
        The bread within 0.035 m of the pan's centre in x and in y, and pan centre and bread more than 0.02 m
        above the table top (the original's 0.76 m: the skillet is held up with the bread in it).
    """

    name = "place_bread_skillet_ee"
    tier = "fine"
    instruction = (
        "If there is one bread on the table, move skillet to center and use one arm to grab the bread and put "
        "it into the skillet."
    )
    max_turns = 5
    chunk = 10
    min_height_original_m = 0.76
    skillet_yaw_rad = 0.0
