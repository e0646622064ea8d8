"""Tier 2 Hand1: handover_mic."""

from __future__ import annotations

from typing import Any

import numpy as np
import sapien

from mallvi.bench.tasks.base import BenchTask, BenchWorld, grippers_open, holds, point, pos, side_range
from mallvi.contracts.geometry import ArmSide
from mallvi.sim_bridge.objects import make_microphone
from mallvi.sim_bridge.scene_spec import SceneContents

HEAD_ABOVE_TABLE_M = 0.18  # the paper's 0.92 m with its table top at 0.74 m


class HandoverMic(BenchTask):
    """Hand the microphone from one gripper to the other.

    Task Description:
        Use one arm to grasp the microphone on the table and hand it over to the other arm.
    Randomizations:
        An upright microphone (~0.16 m) at |x| ∈ [0.15, 0.20] on a random side, y ∈ [-0.10, 0.0].
    Success Conditions:
        One arm holds the microphone (simulator truth: it is between that arm's closed fingers), the other
        arm's gripper is open (> 0.8), and the head is more than 0.18 m above the table top.
    """

    name = "handover_mic"
    tier = "planning"
    instruction = "Use one arm to grasp the microphone on the table and handover it to the other arm."
    arm_spacing_m = 0.6
    max_turns = 10
    chunk = 8

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        lo, hi = side_range(rng, 0.15, 0.20)
        p = sapien.Pose(p=[float(rng.uniform(lo, hi)), float(rng.uniform(-0.10, 0.0)), table_top_z + 0.001])
        return SceneContents({"microphone": make_microphone(scene, "microphone", p)}, self.instruction, {})

    def giver(self, world: BenchWorld) -> ArmSide:
        """The arm on the microphone's side (decided from where it stands now)."""
        return "left" if pos(world, "microphone")[0] < 0 else "right"

    def check_success(self, world: BenchWorld) -> bool:
        head_z = float(point(world, "microphone", "head")[2])
        if head_z <= world.table_top_z + HEAD_ABOVE_TABLE_M:
            return False
        pairs: tuple[tuple[ArmSide, ArmSide], ...] = (("left", "right"), ("right", "left"))
        return any(holds(world, receiver, "microphone") and grippers_open(world, giver) for receiver, giver in pairs)

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        h["handover_point"] = [0.0, -0.05, round(world.table_top_z + 0.25, 4)]
        h["notes"] = [
            "Grasp the microphone low on its handle (contact points 0-3), lift it, bring it to the handover point,",
            "take it with the other arm high on the handle (contact points 4-7), then open the first gripper.",
        ]
        return h
