"""Tier 2 Hand1: handover_mic."""

from __future__ import annotations

from typing import Any

import numpy as np
import sapien

from mallvi.bench.tasks.conditions import Condition, above, flag
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, holds, open_conditions, point, side_range
from mallvi.contracts.geometry import ArmSide
from mallvi.sim_bridge.objects import make_microphone
from mallvi.sim_bridge.scene_spec import SceneContents


class HandoverMic(BenchTask):
    """Hand the microphone from one gripper to the other.

    Task Description:
        Use one arm to grasp the microphone on the table and hand it over to the other arm.
    Randomizations:
        An upright microphone (~0.16 m) at |x| ∈ [0.15, 0.20] on a random side, y ∈ [-0.05, 0.0]. The receiving
        arm is fixed at set-up: the arm opposite to the microphone's starting side (``metadata["receiver"]``).
    Success Conditions:
        The receiving arm holds the microphone (simulator truth: it is between that arm's closed fingers), the
        giving arm's gripper is open (> 0.8), and the head (functional point) is above z = 0.92 m (world, as the
        original: 0.18-0.21 m above the table top). A lift by one arm alone never succeeds.
    """

    name = "handover_mic"
    tier = "planning"
    instruction = "Use one arm to grasp the microphone on the table and handover it to the other arm."
    arm_spacing_m = 0.6
    max_turns = 10
    chunk = 8

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        lo, hi = side_range(rng, 0.15, 0.20)
        x = float(rng.uniform(lo, hi))
        p = sapien.Pose(p=[x, float(rng.uniform(-0.05, 0.0)), table_top_z + 0.001])
        receiver: ArmSide = "left" if x > 0 else "right"
        objects = {"microphone": make_microphone(scene, "microphone", p)}
        return SceneContents(objects, self.instruction, {"receiver": receiver, "giver": _other(receiver)})

    def receiver(self, world: BenchWorld) -> ArmSide:
        """The arm that must end up holding the microphone (fixed when the scene was set up)."""
        side = world.metadata.get("receiver")
        if side in ("left", "right"):
            return "left" if side == "left" else "right"
        raise ValueError("handover_mic: the scene did not record its receiving arm")

    def giver(self, world: BenchWorld) -> ArmSide:
        """The arm on the microphone's starting side."""
        return _other(self.receiver(world))

    def conditions(self, world: BenchWorld) -> list[Condition]:
        receiver = self.receiver(world)
        head_z = float(point(world, "microphone", "head")[2])
        return [
            flag(f"{receiver} arm (receiver) holds the microphone", holds(world, receiver, "microphone")),
            *open_conditions(world, _other(receiver)),
            above("microphone head z (world)", head_z, 0.92),
        ]

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        h["handover_point"] = [0.0, -0.05, round(world.table_top_z + 0.25, 4)]
        h["giver"], h["receiver"] = self.giver(world), self.receiver(world)
        h["notes"] = [
            f"Grasp the microphone with the {self.giver(world)} arm low on its handle (contact points 0-3), lift it,",
            f"bring it to the handover point, take it with the {self.receiver(world)} arm high on the handle",
            "(contact points 4-7), then open the first gripper.",
        ]
        return h


def _other(arm: ArmSide) -> ArmSide:
    return "right" if arm == "left" else "left"
