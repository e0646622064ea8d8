"""Tier 3 Grab1: grab_roller."""

from __future__ import annotations

from typing import Any

import numpy as np
import sapien

from mallvi.bench.tasks.conditions import Condition, above, below, flag
from mallvi.bench.tasks.task_base import CLOSED_BELOW, BenchTask, BenchWorld, holds, point, pos, yaw_pose
from mallvi.sim_bridge.objects import make_roller
from mallvi.sim_bridge.scene_spec import SceneContents


class GrabRoller(BenchTask):
    """Lift the roller with both grippers (16-dim EE actions).

    Task Description:
        Use both arms to grab the roller on the table and lift it above z = 0.8 m (world; the table top is at
        0.74 + b, b ∈ [-0.03, 0]).
    Randomizations:
        Roller Ø0.035 × 0.23 m lying along x turned by a yaw in [-0.8, 0.8] rad, at x ∈ [-0.15, 0.15],
        y ∈ [-0.18, -0.05]; grasp points ±0.085 m along its axis (cp0 left, cp1 right).
    Success Conditions:
        The roller's axis above z = 0.80 m (world, as the original: 0.06-0.09 m above the table top), both grippers
        closed
        (< 0.2) and the roller held (simulator truth: between the fingers of an arm; our simulator attaches an
        object to one gripper at a time, so "both grippers closed" stands in for the two-gripper contact).
    """

    name = "grab_roller"
    tier = "fine"
    instruction = "Use both arms to grab the roller on the table and lift it to z > 0.8(m)."
    arm_spacing_m = 0.7
    max_turns = 3
    chunk = 6

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        x, y = float(rng.uniform(-0.15, 0.15)), float(rng.uniform(-0.18, -0.05))
        pose = yaw_pose(x, y, table_top_z + 0.001, float(rng.uniform(-0.8, 0.8)))
        return SceneContents({"roller": make_roller(scene, "roller", pose)}, self.instruction, {})

    def conditions(self, world: BenchWorld) -> list[Condition]:
        axis_z = float(pos(world, "roller")[2]) + world.objects["roller"].size_m[2] / 2
        return [
            above("roller axis z (world)", axis_z, 0.80),
            *(
                below(f"{a} gripper opening", world.gripper_opening(a), CLOSED_BELOW, unit="")
                for a in ("left", "right")
            ),
            flag("an arm holds the roller", holds(world, "left", "roller") or holds(world, "right", "roller")),
        ]

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        h["grasp_points"] = {
            arm: [round(float(v), 4) for v in point(world, "roller", cp)]
            for arm, cp in (("left", "cp0"), ("right", "cp1"))
        }
        return h
