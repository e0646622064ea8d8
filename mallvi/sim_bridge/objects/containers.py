"""Containers that really hold things: bowl, open (plastic) box, tray, basket, dustbin, skillet.

Walls are separate collision boxes around a floor, so an object dropped inside stays inside. Builders follow the
conventions of parts.py; every container has a "center" point on the top of its floor (where things are put).
"""

from __future__ import annotations

import math

import sapien

from mallvi.sim_bridge.objects.palette import RGB, rgb_of
from mallvi.sim_bridge.objects.parts import Parts, finish, numbered, top_grasp
from mallvi.sim_bridge.scene_spec import SimObject


def _walls(parts: Parts, size_m: tuple[float, float, float], floor_m: float, wall_m: float, rgb: RGB) -> None:
    """A floor plus four walls filling the outer box ``size_m`` (x, y, z)."""
    sx, sy, sz = size_m
    parts.box((0, 0, floor_m / 2), (sx / 2, sy / 2, floor_m / 2), rgb)
    wall_h = sz - floor_m
    zc = floor_m + wall_h / 2
    for s in (-1, 1):
        parts.box((s * (sx - wall_m) / 2, 0, zc), (wall_m / 2, sy / 2, wall_h / 2), rgb)
        parts.box((0, s * (sy - wall_m) / 2, zc), (sx / 2 - wall_m, wall_m / 2, wall_h / 2), rgb)


def _wall_grasps(size_m: tuple[float, float, float], wall_m: float) -> list[sapien.Pose]:
    """Top-down grasps on the middle of each wall's top edge: -x, +x, -y, +y walls."""
    sx, sy, sz = size_m
    z = sz - 0.015
    return [
        top_grasp((-(sx - wall_m) / 2, 0, z), 0.0),
        top_grasp(((sx - wall_m) / 2, 0, z), 0.0),
        top_grasp((0, -(sy - wall_m) / 2, z), math.pi / 2),
        top_grasp((0, (sy - wall_m) / 2, z), math.pi / 2),
    ]


def make_bowl(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "white",
    rgb: RGB | None = None,
    diameter_m: float = 0.18,
    height_m: float = 0.052,
    static: bool = False,
) -> SimObject:
    """A bowl with a flared wall (so bowls nest): cp0..cp3 top-down grasps on the rim at +x, +y, -x, -y;
    "rim" = cp0."""
    c = rgb or rgb_of(color)
    r_top = diameter_m / 2
    r_base = 0.6 * r_top
    floor, wall = 0.006, 0.006
    parts = Parts(scene, density_kg_m3=700.0).cylinder((0, 0, floor / 2), r_base, floor / 2, c)
    parts.ring(0.0, height_m, r_base, r_top - wall / 2, wall, c, segments=16)
    rim_r, rim_z = r_top - 0.008, height_m - 0.012
    grasps = [top_grasp((rim_r * math.cos(a), rim_r * math.sin(a), rim_z), a)
              for a in (0.0, math.pi / 2, math.pi, -math.pi / 2)]
    points = numbered("cp", grasps)
    points["rim"] = grasps[0]
    points["center"] = sapien.Pose([0, 0, floor])
    return finish(parts, name, pose, label="bowl", category="rimmed", size_m=(diameter_m, diameter_m, height_m),
                  color=color, points=points, static=static)


def make_open_box(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "blue",
    rgb: RGB | None = None,
    size_m: tuple[float, float, float] = (0.155, 0.19, 0.075),
    static: bool = False,
    label: str = "plastic_box",
) -> SimObject:
    """An open box (floor + four walls): cp0..cp3 top-down grasps on the -x, +x, -y, +y walls."""
    wall = 0.006
    parts = Parts(scene, density_kg_m3=600.0)
    _walls(parts, size_m, wall, wall, rgb or rgb_of(color))
    points = numbered("cp", _wall_grasps(size_m, wall))
    points["center"] = sapien.Pose([0, 0, wall])
    return finish(parts, name, pose, label=label, category="rimmed", size_m=size_m, color=color, points=points,
                  static=static)


def make_tray(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "brown",
    rgb: RGB | None = None,
    size_m: tuple[float, float, float] = (0.31, 0.21, 0.02),
    drop_offset_m: float = 0.075,
    static: bool = False,
) -> SimObject:
    """A flat tray with a low rim; "drop_left"/"drop_right" are its two drop points at x = ∓``drop_offset_m``
    on the floor (z down, like fp1); cp0/cp1 are top-down grasps on the -x/+x rims."""
    floor = wall = 0.008
    parts = Parts(scene, density_kg_m3=500.0)
    _walls(parts, size_m, floor, wall, rgb or rgb_of(color))
    rim_z = size_m[2] - 0.006
    points = {
        "cp0": top_grasp((-(size_m[0] - wall) / 2, 0, rim_z), 0.0),
        "cp1": top_grasp(((size_m[0] - wall) / 2, 0, rim_z), 0.0),
        "drop_left": sapien.Pose([-drop_offset_m, 0, floor], [0, 1, 0, 0]),
        "drop_right": sapien.Pose([drop_offset_m, 0, floor], [0, 1, 0, 0]),
        "center": sapien.Pose([0, 0, floor]),
    }
    return finish(parts, name, pose, label="tray", category="rimmed", size_m=size_m, color=color, points=points,
                  static=static)


def make_basket(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "brown",
    rgb: RGB | None = None,
    size_m: tuple[float, float, float] = (0.14, 0.23, 0.175),
    body_height_m: float = 0.12,
    static: bool = False,
) -> SimObject:
    """A basket: an open body ``body_height_m`` tall with a handle loop standing on each of its -x/+x walls.
    cp0/cp1 = "handle_left"/"handle_right" are top-down grasps on the handle bars (fingers across the bar)."""
    c = rgb or rgb_of(color)
    sx, sy, sz = size_m
    wall = 0.008
    parts = Parts(scene, density_kg_m3=500.0)
    _walls(parts, (sx, sy, body_height_m), wall, wall, c)
    bar = 0.012
    post_h = sz - body_height_m - bar
    grasps = []
    for s in (-1, 1):
        x = s * (sx - wall) / 2
        for py in (-0.05, 0.05):
            parts.box((x, py, body_height_m + post_h / 2), (wall / 2, 0.005, post_h / 2), c)
        bar_x = s * (sx - bar) / 2
        parts.box((bar_x, 0, sz - bar / 2), (bar / 2, 0.055, bar / 2), c)
        grasps.append(top_grasp((bar_x, 0, sz - bar / 2), 0.0))
    points = numbered("cp", grasps)
    points["handle_left"], points["handle_right"] = grasps
    points["center"] = sapien.Pose([0, 0, wall])
    return finish(parts, name, pose, label="basket", category="rimmed", size_m=size_m, color=color, points=points,
                  static=static)


def make_dustbin(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "grey",
    rgb: RGB | None = None,
    size_m: tuple[float, float, float] = (0.40, 0.60, 0.45),
    static: bool = True,
) -> SimObject:
    """An open bin standing on the floor (static by default): floor + four walls; "center" is the inside bottom,
    "drop" the middle of its opening (z down)."""
    wall = 0.01
    parts = Parts(scene, density_kg_m3=500.0)
    _walls(parts, size_m, wall, wall, rgb or rgb_of(color))
    points = {"center": sapien.Pose([0, 0, wall]), "drop": sapien.Pose([0, 0, size_m[2]], [0, 1, 0, 0])}
    return finish(parts, name, pose, label="dustbin", category="rimmed", size_m=size_m, color=color, points=points,
                  static=static)


def make_skillet(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "black",
    rgb: RGB | None = None,
    diameter_m: float = 0.20,
    handle_length_m: float = 0.12,
    static: bool = False,
) -> SimObject:
    """A pan with a straight handle along +x: "handle" (= cp0) is a top-down grasp on the handle with the fingers
    across it; "center" is the top of the pan's floor."""
    c = rgb or rgb_of(color)
    r = diameter_m / 2
    floor, wall_h = 0.008, 0.035
    parts = Parts(scene, density_kg_m3=700.0).cylinder((0, 0, floor / 2), r - 0.01, floor / 2, c)
    parts.ring(0.0, wall_h, r - 0.01, r - 0.003, 0.006, c, segments=20)
    handle_z = 0.025
    parts.box((r + handle_length_m / 2 - 0.005, 0, handle_z), (handle_length_m / 2, 0.01, 0.0075), c)
    handle = top_grasp((r + 0.6 * handle_length_m, 0, handle_z), math.pi / 2)
    points = {"cp0": handle, "handle": handle, "center": sapien.Pose([0, 0, floor])}
    x_max = r + handle_length_m - 0.005
    return finish(parts, name, pose, label="skillet", category="rimmed", size_m=(r + x_max, diameter_m, wall_h),
                  color=color, points=points, static=static, bbox_center=((x_max - r) / 2, 0, wall_h / 2))
