"""The object library: primitive-geometry objects with named functional and contact points.

Each ``make_<kind>(scene, name, pose, *, color=..., rgb=None, static=False, <sizes>) -> SimObject`` adds one
entity to a SAPIEN scene. ``pose`` is the pose of the object's bottom centre; points follow parts.py's
conventions ("fp0"/"fp1" bottom/top centre, "cpN" grasp frames, semantic names such as "handle" or "hook").
``OBJECT_BUILDERS`` lists every kind once, for tools and tests that walk the whole library.
"""

from __future__ import annotations

from collections.abc import Callable

from mallvi.sim_bridge.objects.basic import (
    make_bell,
    make_block,
    make_bottle,
    make_bread,
    make_burger,
    make_can,
    make_fries_box,
    make_pad,
    make_roller,
    make_scale,
    make_toy,
)
from mallvi.sim_bridge.objects.clutter import CLUTTER_KINDS, clutter_extent_m, make_clutter
from mallvi.sim_bridge.objects.containers import (
    make_basket,
    make_bowl,
    make_dustbin,
    make_open_box,
    make_skillet,
    make_tray,
)
from mallvi.sim_bridge.objects.palette import BLOCK_COLORS, PALETTE, RGB, rgb_of
from mallvi.sim_bridge.objects.parts import side_grasp, top_grasp, yaw_quat
from mallvi.sim_bridge.objects.tools import make_microphone, make_mug, make_rack
from mallvi.sim_bridge.scene_spec import SimObject

ObjectBuilder = Callable[..., SimObject]

OBJECT_BUILDERS: dict[str, ObjectBuilder] = {
    "block": make_block,
    "can": make_can,
    "bottle": make_bottle,
    "pad": make_pad,
    "scale": make_scale,
    "roller": make_roller,
    "bell": make_bell,
    "bread": make_bread,
    "toy": make_toy,
    "burger": make_burger,
    "fries_box": make_fries_box,
    "bowl": make_bowl,
    "open_box": make_open_box,
    "tray": make_tray,
    "basket": make_basket,
    "dustbin": make_dustbin,
    "skillet": make_skillet,
    "mug": make_mug,
    "rack": make_rack,
    "microphone": make_microphone,
    "clutter": make_clutter,
}

__all__ = [
    "BLOCK_COLORS",
    "CLUTTER_KINDS",
    "OBJECT_BUILDERS",
    "PALETTE",
    "RGB",
    "ObjectBuilder",
    "clutter_extent_m",
    "make_basket",
    "make_bell",
    "make_block",
    "make_bottle",
    "make_bowl",
    "make_bread",
    "make_burger",
    "make_can",
    "make_clutter",
    "make_dustbin",
    "make_fries_box",
    "make_microphone",
    "make_mug",
    "make_open_box",
    "make_pad",
    "make_rack",
    "make_roller",
    "make_scale",
    "make_skillet",
    "make_toy",
    "make_tray",
    "rgb_of",
    "side_grasp",
    "top_grasp",
    "yaw_quat",
]
