"""Tier 2 Hand3: hanging_mug."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import sapien

from mallvi.bench.tasks.conditions import Condition, above, below
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, point, yaw_pose
from mallvi.sim_bridge.objects import make_mug, make_rack
from mallvi.sim_bridge.scene_spec import SceneContents

HOOK_HEIGHT_M = 0.14  # ours: a mug held by its rim with the handle on a 0.20 m hook is beyond the arms' reach


class HangingMug(BenchTask):
    """Hang the mug on the rack's hook.

    Task Description:
        Use the left arm to pick the mug, rotate it and put it down in the middle of the table, then use the
        right arm to pick the mug and hang it onto the rack.
    Randomizations:
        Mug (r 0.04 m, h 0.09 m, handle towards +x rotated by a yaw in [-1.57, 1.57] rad) at x ∈ [-0.25, -0.10],
        y ∈ [-0.05, 0.05] (y ≤ 0 where |x| < 0.15); rack 0.26 m tall, fixed to the table as the original's
        (static), with its hook pointing to -x at x ∈ [0.15, 0.22], y ∈ [-0.05, 0.05]. **Ours**: the rack's range
        (the original's x ∈ [0.10, 0.30], y ∈ [0.13, 0.17] puts the hook beyond the right arm's reach: near
        x = 0.10 the hook's tip crosses the centre line, and the mug held by its rim cannot be brought there) and
        its yaw (none; the original turns it by up to ±0.2 rad); the hook rises from the post at 0.14 m (not
        0.20 m), still above the 0.11 m the success check asks of the handle: with the hook higher the mug held
        by its rim is beyond the raised arms' reach.
    Success Conditions:
        The mug's handle point within 0.02 m of the hook point in x and in y and above z = 0.85 m (world, as the
        original: 0.11-0.14 m above the table top).
    """

    name = "hanging_mug"
    tier = "planning"
    instruction = (
        "Use left arm to pick the mug on the table, rotate the mug and put the mug down in the middle of the "
        "table, use the right arm to pick the mug and hang it onto the rack."
    )
    arm_spacing_m = 0.6
    max_turns = 10
    chunk = 8

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        z = table_top_z + 0.001
        mx = float(rng.uniform(-0.25, -0.10))
        my = float(rng.uniform(-0.05, 0.0 if abs(mx) < 0.15 else 0.05))  # the original keeps y ≤ 0 near the middle
        mug_pose = yaw_pose(mx, my, z, float(rng.uniform(-1.57, 1.57)))
        rack_pose = sapien.Pose(p=[float(rng.uniform(0.15, 0.22)), float(rng.uniform(-0.05, 0.05)), z])
        objects = {
            "mug": make_mug(scene, "mug", mug_pose),
            "rack": make_rack(scene, "rack", rack_pose, hook_height_m=HOOK_HEIGHT_M, static=True),
        }
        return SceneContents(objects, self.instruction, {})

    def conditions(self, world: BenchWorld) -> list[Condition]:
        handle = point(world, "mug", "handle")
        d = handle - point(world, "rack", "hook")
        return [
            below("handle - hook |dx|", abs(float(d[0])), 0.02),
            below("handle - hook |dy|", abs(float(d[1])), 0.02),
            above("handle z (world)", float(handle[2]), 0.85),
        ]

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        h["hook_point"] = [round(float(v), 4) for v in point(world, "rack", "hook")]
        h["middle_pose"] = [0.0, -0.05, round(world.table_top_z, 4)]
        h["notes"] = [f"Turn the mug so its handle faces the hook (yaw {math.pi:.2f} rad from +x) before hanging."]
        return h
