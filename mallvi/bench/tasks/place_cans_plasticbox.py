"""Tier 2 Place1: place_cans_plasticbox."""

from __future__ import annotations

from typing import Any

import numpy as np
import sapien

from mallvi.bench.tasks.conditions import Condition, below
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, pos
from mallvi.sim_bridge.objects import make_can, make_open_box
from mallvi.sim_bridge.scene_spec import SceneContents

BOX_OUTER_M = (0.155, 0.19, 0.075)
BOX_WALL_M = 0.006  # make_open_box's wall and floor
CAN_CLEARANCE_M = 0.006  # between a can and the walls
#: the largest can radius the scene draws: the box's two spots are laid out for it
MAX_CAN_RADIUS_M = 0.04
#: the original refuses a place whose target is farther than this (in x, y or z) from both of the box's spots
PLACE_REFUSAL_M = 0.1
PLACE_REFUSED = ("Target pose is too far from the functional points of the plastic box. You must be wrong! Reconsider "
                 "the functional points you should put the can. Replanning!!!")


class PlaceCansPlasticbox(BenchTask):
    """Put both cans into the plastic box.

    Task Description:
        Use dual arm to pick and place cans into plasticbox. Each arm takes the can on its side.
    Randomizations:
        Open box 0.155×0.19×0.075 m at x = 0, y ∈ [-0.15, -0.10]; two cans Ø ∈ [0.07, 0.08] m, height 0.096 m,
        the left one at x ∈ [-0.25, -0.15], the right one at x ∈ [0.15, 0.25], both y ∈ [-0.15, -0.07].
    Success Conditions:
        Each can's centre within 0.10 m (xy) of the box centre. No arm-allocation check (as in the paper).
    Refusal (the paper semantics, as the original):
        A ``place_actor`` whose target is more than 0.1 m (in x, y or z) from both of the box's two spots
        (``box_spots``) is refused, so the model can re-plan.
    """

    name = "place_cans_plasticbox"
    tier = "planning"
    instruction = "Use dual arm to pick and place cans into plasticbox."
    arm_spacing_m = 0.7
    max_turns = 8
    chunk = 5
    allocation_threshold_m = None

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        z = table_top_z + 0.001
        box_y = float(rng.uniform(-0.15, -0.10))
        box = make_open_box(scene, "plasticbox", sapien.Pose(p=[0.0, box_y, z]), color="white", size_m=BOX_OUTER_M)
        objects = {"plasticbox": box}
        for side, (lo, hi) in (("left", (-0.25, -0.15)), ("right", (0.15, 0.25))):
            radius = float(rng.uniform(0.035, 0.04))
            p = sapien.Pose(p=[float(rng.uniform(lo, hi)), float(rng.uniform(-0.15, -0.07)), z])
            objects[f"can_{side}"] = make_can(scene, f"can_{side}", p, radius_m=radius, height_m=0.096)
        return SceneContents(objects, self.instruction, {"task": self.name})

    def conditions(self, world: BenchWorld) -> list[Condition]:
        box = pos(world, "plasticbox")
        return [below(f"{c} - box centre distance (xy)", float(np.hypot(*(pos(world, c) - box)[:2])), 0.10)
                for c in ("can_left", "can_right")]  # fmt: skip

    def box_spots(self, world: BenchWorld) -> list[list[float]]:
        """The box's two functional points [x, y, z, qw, qx, qy, qz] (the original's targets for the cans): on a
        diagonal of the floor, each against its corner, left-near then right-far (two cans of up to 0.08 m do not
        fit side by side across the box's 0.143 m inner width)."""
        box = world.objects["plasticbox"].frame_pose()
        centre, q = np.asarray(box.p, dtype=float), [float(v) for v in box.q]
        dx = BOX_OUTER_M[0] / 2 - BOX_WALL_M - MAX_CAN_RADIUS_M - CAN_CLEARANCE_M
        dy = BOX_OUTER_M[1] / 2 - BOX_WALL_M - MAX_CAN_RADIUS_M - CAN_CLEARANCE_M
        floor_z = float(centre[2]) + BOX_WALL_M + 0.005
        return [[float(centre[0]) + s * dx, float(centre[1]) + s * dy, floor_z, *q] for s in (-1.0, 1.0)]

    def place_refusal(self, world: BenchWorld, actor: str, target_pose: list[float]) -> str | None:
        target = np.asarray(target_pose[:3], dtype=float)
        far = [float(np.max(np.abs(target - np.asarray(spot[:3])))) > PLACE_REFUSAL_M for spot in self.box_spots(world)]
        return PLACE_REFUSED if all(far) else None

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        h = super().hints(world)
        box = pos(world, "plasticbox")
        floor_z = float(box[2]) + BOX_WALL_M
        targets = {}
        # on a diagonal of the box, each against its corner: side by side, two cans of up to 0.08 m do not fit
        # across the box's 0.143 m inner width (the second would land on the first and topple out)
        for can, sx, sy in (("can_left", -1.0, -1.0), ("can_right", 1.0, 1.0)):
            r = 0.5 * float(world.objects[can].size_m[0])
            dx = BOX_OUTER_M[0] / 2 - BOX_WALL_M - r - CAN_CLEARANCE_M
            dy = BOX_OUTER_M[1] / 2 - BOX_WALL_M - r - CAN_CLEARANCE_M
            targets[can] = [round(float(box[0]) + sx * dx, 4), round(float(box[1]) + sy * dy, 4),
                            round(floor_z + 0.005, 4)]  # fmt: skip
        h["targets"] = targets
        h["notes"] = ["Lower each can onto its target inside the box: place_actor with the 3-dim target_pose."]
        return h
