"""Tier 2 Place3 / Tier 3 Place9: place_burger_fries."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import sapien

from mallvi.bench.tasks.conditions import Condition, below
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, open_conditions, point, pos
from mallvi.bench.tiers import TierName
from mallvi.sim_bridge.objects import make_burger, make_fries_box, make_tray
from mallvi.sim_bridge.scene_spec import SceneContents

DROP_POINTS = {"burger": "drop_left", "fries": "drop_right"}


class PlaceBurgerFries(BenchTask):
    """Put the burger and the fries onto the tray.

    Task Description:
        Use dual arm to pick the hamburg and frenchfries and put them onto the tray.
    Randomizations:
        As the original: tray 0.31×0.21 m at x = 0, y ∈ [-0.15, -0.10]; burger (Ø0.07×0.03) at
        x ∈ [-0.30, -0.25], fries box (0.07×0.03×0.095) at x ∈ [0.20, 0.30], both y ∈ [-0.15, -0.07] (clear of the
        tray's |x| ≤ 0.155 m).
    Success Conditions:
        The burger within 0.08 m (xy) of the tray's left drop point, the fries within 0.08 m of its right drop
        point; both grippers open. No arm-allocation check (as in the paper).
    """

    name = "place_burger_fries"
    tier: ClassVar[TierName] = "planning"
    instruction = "Use dual arm to pick the hamburg and frenchfries and put them onto the tray."
    arm_spacing_m = 0.7
    max_turns = 10
    chunk = 6
    allocation_threshold_m = None

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        z = table_top_z + 0.001
        tray = make_tray(scene, "tray", sapien.Pose(p=[0.0, float(rng.uniform(-0.15, -0.10)), z]))
        burger = make_burger(
            scene, "burger", sapien.Pose(p=[float(rng.uniform(-0.30, -0.25)), float(rng.uniform(-0.15, -0.07)), z])
        )
        fries = make_fries_box(
            scene, "fries", sapien.Pose(p=[float(rng.uniform(0.20, 0.30)), float(rng.uniform(-0.15, -0.07)), z])
        )
        return SceneContents({"tray": tray, "burger": burger, "fries": fries}, self.instruction, {})

    def conditions(self, world: BenchWorld) -> list[Condition]:
        out = []
        for obj, drop in DROP_POINTS.items():
            d = pos(world, obj) - point(world, "tray", drop)
            out.append(below(f"{obj} - tray {drop} distance (xy)", float(np.hypot(d[0], d[1])), 0.08))
        return [*out, *open_conditions(world)]

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        h["targets"] = {o: [round(float(v), 4) for v in point(world, "tray", d)] for o, d in DROP_POINTS.items()}
        return h


class PlaceBurgerFriesEE(PlaceBurgerFries):
    """Tier 3 Place9: place_burger_fries with 16-dim end-effector actions.

    Task Description:
        As Tier 2 place_burger_fries, controlled with 16-dim EE actions.
    Randomizations:
        As Tier 2 place_burger_fries.
    Success Conditions:
        As Tier 2 place_burger_fries.
    """

    name = "place_burger_fries_ee"
    tier = "fine"
    max_turns = 8
    chunk = 6
