"""Tier 2 Place5 / Tier 3 Place10: place_bread_skillet."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import sapien

from mallvi.bench.tasks.base import BenchTask, BenchWorld, point, pos, yaw_pose
from mallvi.bench.tiers import TierName
from mallvi.sim_bridge.objects import make_bread, make_skillet
from mallvi.sim_bridge.scene_spec import SceneContents


class PlaceBreadSkillet(BenchTask):
    """Put the bread into the skillet.

    Task Description:
        If there is one bread on the table, use one arm to grab the bread and put it into the skillet.
    Randomizations:
        Bread (0.12 m loaf) at |x| ∈ [0.15, 0.25] on a random side, y ∈ [-0.12, 0.0]; skillet (Ø0.20 pan with a
        0.12 m handle pointing outwards) on the other side, its centre at |x| ∈ [0.0, 0.05], y ∈ [-0.12, -0.05]
        (**ours**: close to the centre line so the bread's arm can reach over the pan).
    Success Conditions:
        The bread within 0.035 m (xy) of the pan's centre; pan and bread above table top - 0.02 m (not fallen).
    """

    name = "place_bread_skillet"
    tier: ClassVar[TierName] = "planning"
    instruction = "If there is one bread on the table, use one arm to grab the bread and put it into the skillet."
    arm_spacing_m = 0.7
    max_turns = 6
    chunk = 5
    #: minimum height of bread and pan origins above the table top
    min_height_m = -0.02

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        z = table_top_z + 0.001
        s = 1.0 if rng.random() < 0.5 else -1.0  # the bread's side
        bread = make_bread(
            scene, "bread", yaw_pose(s * float(rng.uniform(0.15, 0.25)), float(rng.uniform(-0.12, 0.0)), z)
        )
        pan_x = -s * float(rng.uniform(0.0, 0.05))
        yaw = 0.0 if s < 0 else np.pi  # handle (+x of the pan) pointing away from the bread
        skillet = make_skillet(scene, "skillet", yaw_pose(pan_x, float(rng.uniform(-0.12, -0.05)), z, yaw))
        return SceneContents({"bread": bread, "skillet": skillet}, self.instruction, {})

    def check_success(self, world: BenchWorld) -> bool:
        d = pos(world, "bread") - point(world, "skillet", "center")
        z_min = world.table_top_z + self.min_height_m
        return bool(
            np.hypot(d[0], d[1]) < 0.035 and pos(world, "bread")[2] > z_min and pos(world, "skillet")[2] > z_min
        )

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        h["targets"] = {"bread": [round(float(v), 4) for v in point(world, "skillet", "center")]}
        return h


class PlaceBreadSkilletEE(PlaceBreadSkillet):
    """Tier 3 Place10: place_bread_skillet with 16-dim end-effector actions.

    Task Description:
        If there is one bread on the table, move the skillet to the centre and use one arm to grab the bread and
        put it into the skillet (16-dim EE actions).
    Randomizations:
        As Tier 2 place_bread_skillet.
    Success Conditions:
        The bread within 0.035 m (xy) of the pan's centre, and pan and bread more than 0.02 m above the table
        top (the paper's 0.76 m threshold: the skillet is held up with the bread in it).
    """

    name = "place_bread_skillet_ee"
    tier = "fine"
    instruction = (
        "If there is one bread on the table, move skillet to center and use one arm to grab the bread and put "
        "it into the skillet."
    )
    max_turns = 5
    chunk = 10
    min_height_m = 0.02
