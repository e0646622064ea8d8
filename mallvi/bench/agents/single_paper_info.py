"""The original benchmark's assistant info for each task, filled in from our scene (the paper protocol).

The texts are the original's word for word (``bench/data/paper_prompts.json``, taken from each task's
``get_assistantInfo`` / ``get_assistantInfo_vla``); every value they interpolate comes from our world, printed
as the original prints it (``single_paper_format``). Where the original names a point of its own models (a
tray's two target spots, a rack's hook, a box's two spots), the info names ours. Changed on purpose, because the
original's number is a fact of its robot or its scene that is false in ours:

* Tier 3 gripper height: ours (``GRIPPER_HEIGHT_M``, end-effector pose to fingertips) instead of 0.162/0.144 m.
* put_bottles_dustbin: the drop pose above our bin (on our table) instead of the original's floor bin.
* place_bread_skillet (Tier 3): the handle's position and grasp orientation of our skillet (its handle points
  along x, the original's along -y).
* Grasp orientations are computed for our objects (fingers across the part our gripper spans).

Values the original draws at set-up (the ranking targets, the tower's row) are drawn once per episode from its
seed (``EpisodeFacts``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from mallvi.bench.agents.single_paper_format import (
    DOWN_QUAT_WXYZ,
    axis_xy,
    down_quat_opening_along,
    f32,
    plist,
    pose_repr,
    rounded,
)
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld

#: ours: from the end-effector pose of a gripper pointing down to its fingertips (the original: 0.162 m for its
#: ARX-X5 tasks, 0.144 m for its Franka tasks)
GRIPPER_HEIGHT_M = 0.13
_ORIGINAL_HEIGHTS = ("0.162", "0.144")
#: the worked example's "a z value of 1m ... the lowest point is 0.838m", for our gripper height
_LOWEST_AT_1M = f"{1.0 - GRIPPER_HEIGHT_M:.3g}"
#: the original's grasp-handover quaternions (its GRASP_DIRECTION_DIC "front_right" / "front_left")
FRONT_RIGHT_WXYZ = [-0.924, 0, 0, -0.383]
FRONT_LEFT_WXYZ = [-0.383, 0, 0, -0.924]
#: above our bin: the end-effector this high over its drop point (a bottle held at its middle clears the rim)
BIN_DROP_ABOVE_M = 0.30


@cache
def paper_data() -> dict[str, Any]:
    """``bench/data/paper_prompts.json``: the original's prompt texts (see ``scripts/paper_prompts_from_source.py``)."""
    text = resources.files("mallvi.bench").joinpath("data/paper_prompts.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@dataclass
class EpisodeFacts:
    """What the original fixes at set-up: the arms' initial end-effector poses and its per-episode draws."""

    initial_pose: dict[str, list[float]]
    draws: dict[str, Any] = field(default_factory=dict)


def arm_pose(world: BenchWorld, side: str) -> list[float]:
    """The arm's end-effector pose [x, y, z, qw, qx, qy, qz], as the original's ``get_arm_pose``."""
    arms: Any = getattr(world, "arms", None)
    if arms is None:
        raise TypeError("the paper protocol's info needs the simulator's arms")
    return [float(v) for v in arms[side].ee_pose().as_list()]


def episode_facts(task: BenchTask, world: BenchWorld) -> EpisodeFacts:
    """The facts of this episode, taken at its start (the arms are home then)."""
    rng = np.random.default_rng([int(getattr(world, "seed", 0)), 31])
    draws: dict[str, Any] = {}
    base = world.table_top_z
    if task.name in ("blocks_ranking_size", "blocks_ranking_rgb"):
        y = float(rng.uniform(-0.2, -0.1))
        ranges = ((-0.1, -0.09), (0.01, 0.02), (0.08, 0.09)) if task.name == "blocks_ranking_size" else (
            (-0.09, -0.08), (-0.01, 0.01), (0.08, 0.09))
        draws["targets"] = [[float(rng.uniform(lo, hi)), y, base, 0, 1, 0, 0] for lo, hi in ranges]
    if task.name == "blocks_tower":
        draws["y_center"] = float(rng.uniform(-0.2, -0.15))
    return EpisodeFacts({s: arm_pose(world, s) for s in ("left", "right")}, draws)


def _point7(world: BenchWorld, obj: str, point: str) -> list[float]:
    p = world.objects[obj].point_world(point)
    return [float(v) for v in (*p.p, *p.q)]


def _centre(world: BenchWorld, obj: str) -> list[float]:
    """An object's position as the original's model origin gives it: our objects' centre (ours sit at the bottom)."""
    return [float(v) for v in world.objects[obj].point_world("bbox_center").p]


def _grasp_quat(world: BenchWorld, obj: str, across: int) -> list[float]:
    """Top-down, fingers opening along the object's local axis ``across`` (0 = x, 1 = y)."""
    return down_quat_opening_along(axis_xy(world.objects[obj].pose.q, across))


# -- Tier 2 -----------------------------------------------------------------------------------------------------
def _cans(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    spots = task.box_spots(world)  # type: ignore[attr-defined]
    return [plist(spots[0]), plist(spots[1])]


def _cross(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    cx, cy, z = 0.0, -0.15, world.table_top_z
    poses = {"red": [cx - 0.12, cy, z, 0, 1, 0, 0], "blue": [cx + 0.12, cy, z, 0, 1, 0, 0],
             "black": [cx, cy, z, 0, 1, 0, 0], "green": [cx, cy + 0.12, z, 0, 1, 0, 0],
             "yellow": [cx, cy - 0.12, z, 0, 1, 0, 0]}  # fmt: skip
    return [plist(poses[c]) for c in ("red", "yellow", "black", "blue", "green")]


def _ranking_size(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    halves = [float(world.objects[n].size_m[0]) / 2 for n in ("red_block", "green_block", "blue_block")]
    return [*(plist(t) for t in facts.draws["targets"]), plist(halves)]


def _ranking_rgb(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    return [plist(t) for t in facts.draws["targets"]]


def _stack_three(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    return [plist([0, -0.13, world.table_top_z + 0.01, 0, 1, 0, 0]),
            *(plist(_point7(world, n, "fp1")) for n in ("red_block", "green_block", "blue_block"))]  # fmt: skip


def _bowls(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    quat = [0, 0.707, 0.707, 0]
    return [*(f32(world.objects[n].pose.p) for n in ("bowl1", "bowl2", "bowl3")), plist([0.0, -0.1, 0.76, *quat]),
            plist(quat)]  # fmt: skip


def _mic(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    middle = plist([0, -0.05, 0.98, 0, 1, 0, 0])
    left, right = plist(FRONT_RIGHT_WXYZ), plist(FRONT_LEFT_WXYZ)
    return [left, right, middle, plist(_point7(world, "microphone", "head")), middle, left, right]


def _handover_block(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    p = world.objects["blue_pad"].point_world("fp1")
    return [pose_repr(p.p, p.q)]


def _mug(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    return [plist([0.0, -0.15, 0.75, 1, 0, 0, 0]), plist(_point7(world, "rack", "hook"))]


def _burger(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    return [plist(_point7(world, "tray", "drop_left")), plist(_point7(world, "tray", "drop_right"))]


def basket_spots(world: BenchWorld) -> list[list[float]]:
    """Our basket's two places for the toy (the original's functional points 0 and 1): above its floor in the
    left and the right half, just over the rim (fingers opened inside the basket snag it)."""
    centre = world.objects["basket"].point_world("center")
    bottom_z = float(world.objects["basket"].pose.p[2])
    out = []
    for s in (-1.0, 1.0):
        out.append([float(centre.p[0]) + s * 0.03, float(centre.p[1]), bottom_z + 0.13, *(float(v) for v in centre.q)])
    return out


def _basket(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    spots = basket_spots(world)
    return [plist(spots[0]), plist(spots[1]), f32(world.objects["toy"].pose.p)]


def _bread_t2(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    left, right = arm_pose(world, "left"), arm_pose(world, "right")
    left = [-0.1, -0.05, left[2] - 0.05, -0.707, 0, -0.707, 0]
    right = [0.1, -0.05, right[2] - 0.05, 0, 0.707, 0, -0.707]
    return [plist(left), plist(right), plist(_point7(world, "skillet", "center"))]


def _tower(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    y, z = facts.draws["y_center"], world.table_top_z
    tops = [plist(_point7(world, f"{c}_block", "fp1")) for c in ("red", "blue", "yellow", "green")]
    halves = {c: round(float(world.objects[f"{c}_block"].size_m[0]) / 2, 4) for c in ("red", "yellow", "blue", "green")}
    return [plist([0, y, z + 0.01, 0, 1, 0, 0]), plist([-0.15, y, z + 0.01, 0, 1, 0, 0]),
            plist([0.15, y, z + 0.01, 0, 1, 0, 0]), *tops, str(halves)]  # fmt: skip


def bin_drop_pose(world: BenchWorld) -> list[float]:
    """The end-effector pose over our bin where a held bottle is let go (top-down)."""
    drop = world.objects["dustbin"].point_world("drop").p
    return [round(float(drop[0]), 3), round(float(drop[1]), 3), round(float(drop[2]) + BIN_DROP_ABOVE_M, 3),
            *DOWN_QUAT_WXYZ]  # fmt: skip


def _bottles(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    return [*(f32(world.objects[n].pose.p) for n in ("bottle1", "bottle2", "bottle3")),
            plist([0, 0.0, 0.88, 0, 1, 0, 0])]  # fmt: skip


# -- Tier 3 -----------------------------------------------------------------------------------------------------
def _scale(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    return [plist(arm_pose(world, "left")), plist(arm_pose(world, "right")), f32(_centre(world, "object")),
            plist(_point7(world, "scale", "top"))]  # fmt: skip


def _burger_ee(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    fries = _centre(world, "fries")
    fries[1] += 0.04  # the original reports the fries 4 cm further in +y
    return [plist(arm_pose(world, "left")), plist(arm_pose(world, "right")), f32(_centre(world, "burger")), f32(fries),
            plist(_point7(world, "tray", "drop_left")[:2]), plist(_point7(world, "tray", "drop_right")[:2]),
            plist(facts.initial_pose["left"]), plist(facts.initial_pose["right"])]  # fmt: skip


def skillet_handle_quat(world: BenchWorld) -> list[float]:
    """Top-down, fingers across our skillet's handle (the handle runs along the pan's x axis)."""
    return [round(v, 3) + 0.0 for v in _grasp_quat(world, "skillet", 1)]  # + 0.0: no "-0.0"


def _bread_ee(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    handle = world.objects["skillet"].point_world("handle").p
    return [rounded(arm_pose(world, "left"), 5), rounded(arm_pose(world, "right"), 5),
            rounded(handle, 5, np.float32), rounded(_centre(world, "bread"), 3, np.float32),
            rounded(_grasp_quat(world, "bread", 1), 3)]  # fmt: skip


def _roller(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    cps = sorted(([float(v) for v in world.objects["roller"].point_world(k).p] for k in ("cp0", "cp1")),
                 key=lambda p: p[0])  # fmt: skip
    return [plist(arm_pose(world, "left")), plist(arm_pose(world, "right")), plist(cps[0]), plist(cps[1]),
            plist(facts.initial_pose["left"]), plist(facts.initial_pose["right"]),
            str(np.asarray(_grasp_quat(world, "roller", 1)))]  # fmt: skip


def _stack_two(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> list[str]:
    z = world.table_top_z + 0.01
    return [rounded(arm_pose(world, "left"), 5), rounded(arm_pose(world, "right"), 5),
            rounded(_centre(world, "red_block"), 5, np.float32), rounded(_centre(world, "green_block"), 5, np.float32),
            rounded(_grasp_quat(world, "red_block", 0), 5), rounded(_grasp_quat(world, "green_block", 0), 5),
            str(z), str(z + 0.05), rounded(facts.initial_pose["left"], 5), rounded(facts.initial_pose["right"], 5)]


Values = Callable[[BenchTask, BenchWorld, EpisodeFacts], list[str]]
VALUES: dict[str, Values] = {
    "place_cans_plasticbox": _cans, "blocks_cross_shape": _cross, "blocks_ranking_size": _ranking_size,
    "blocks_ranking_rgb": _ranking_rgb, "stack_blocks_three": _stack_three, "stack_bowls_three": _bowls,
    "handover_mic": _mic, "handover_block": _handover_block, "hanging_mug": _mug, "place_burger_fries": _burger,
    "place_object_basket": _basket, "place_bread_skillet": _bread_t2, "blocks_tower": _tower,
    "put_bottles_dustbin": _bottles, "place_object_scale": _scale, "place_burger_fries_ee": _burger_ee,
    "place_bread_skillet_ee": _bread_ee, "grab_roller": _roller, "stack_blocks_two": _stack_two,
}  # fmt: skip


def _ours(task: BenchTask, world: BenchWorld, text: str) -> str:
    """A literal piece of the original's text with its facts of its own robot and scene replaced by ours (see the
    module docstring); the values filled in between the pieces are ours already."""
    if task.tier == "fine":
        for height in _ORIGINAL_HEIGHTS:
            text = text.replace(height, f"{GRIPPER_HEIGHT_M:g}")
        text = text.replace("0.838", _LOWEST_AT_1M)
    if task.name == "put_bottles_dustbin":
        text = text.replace("[-0.35, -0.1, 0.93, 0.65, -0.25, 0.25, 0.65]", plist(bin_drop_pose(world)))
    if task.name == "place_bread_skillet_ee":
        text = text.replace("grasp skillet, you should set quat=[0.5,-0.5,0.5,0.5]",
                            f"grasp skillet, you should set quat={plist(skillet_handle_quat(world))}")
    return text


def assistant_info(task: BenchTask, world: BenchWorld, facts: EpisodeFacts) -> str:
    """The original's assistant info of ``task`` for the world as it is now."""
    pieces = paper_data()["tasks"][task.name]["info"]
    values: Iterator[str] = iter(VALUES[task.name](task, world, facts))
    text = "".join(_ours(task, world, p) if isinstance(p, str) else next(values) for p in pieces)
    if next(values, None) is not None:
        raise ValueError(f"{task.name}: more values than the info text has places for")
    return text

