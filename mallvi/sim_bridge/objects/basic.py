"""Solid objects: blocks, cans, bottles, pad, scale, roller, bell, bread, toy, burger, fries box.

Every builder has the form ``make_<kind>(scene, name, pose, *, color=..., rgb=None, static=False, <sizes>)``:
``pose`` places the object's bottom centre (see parts.py for the frame and point conventions), ``color`` is a
palette word recorded on the SimObject and ``rgb`` optionally overrides its shade (colour jitter).
"""

from __future__ import annotations

import math

import sapien

from mallvi.sim_bridge.objects.palette import PALETTE, RGB, rgb_of
from mallvi.sim_bridge.objects.parts import Parts, finish, numbered, side_grasp, top_grasp
from mallvi.sim_bridge.scene_spec import SimObject

_QUARTER = (0.0, math.pi / 2, math.pi, -math.pi / 2)


def _side_ring(z_m: float) -> list[sapien.Pose]:
    """Four horizontal grasps centred on the axis at height ``z_m``, approaching from -x, -y, +x, +y."""
    return [side_grasp((0.0, 0.0, z_m), a) for a in _QUARTER]


def make_block(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "red",
    rgb: RGB | None = None,
    half_size_m: tuple[float, float, float] = (0.025, 0.025, 0.025),
    static: bool = False,
    label: str = "block",
    density_kg_m3: float = 500.0,
) -> SimObject:
    """A box of any size: cp0..cp3 top-down grasps (yaw 0, 90°, 180°, -90°); a tall block (height over 1.5× its
    width) also has side grasps cp4..cp7 in its upper part and cp8..cp11 in its lower part. "center" is its centre."""
    hx, hy, hz = half_size_m
    h = 2 * hz
    parts = Parts(scene, density_kg_m3=density_kg_m3).box((0, 0, hz), half_size_m, rgb or rgb_of(color))
    top_z = h - min(hz, 0.025)
    grasps = [top_grasp((0, 0, top_z), yaw) for yaw in _QUARTER]
    if h > 3.0 * max(hx, hy):
        grasps += _side_ring(0.75 * h) + _side_ring(0.3 * h)
    points = numbered("cp", grasps)
    points["center"] = sapien.Pose([0, 0, hz])
    return finish(parts, name, pose, label=label, category="block", size_m=(2 * hx, 2 * hy, h), color=color,
                  points=points, static=static)


def make_can(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "silver",
    rgb: RGB | None = None,
    radius_m: float = 0.0375,
    height_m: float = 0.096,
    static: bool = False,
) -> SimObject:
    """An upright can: side grasps cp0..cp3 at mid-height, a top-down grasp cp4 near the top."""
    parts = Parts(scene, density_kg_m3=400.0).rolling_cylinder((0, 0, height_m / 2), radius_m, height_m / 2,
                                                               rgb or rgb_of(color), axis="z")
    grasps = [*_side_ring(0.5 * height_m), top_grasp((0, 0, height_m - 0.02))]
    return finish(parts, name, pose, label="can", category="round", size_m=(2 * radius_m, 2 * radius_m, height_m),
                  color=color, points=numbered("cp", grasps), static=static)


def make_bottle(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "green",
    rgb: RGB | None = None,
    radius_m: float = 0.039,
    height_m: float = 0.23,
    static: bool = False,
) -> SimObject:
    """A bottle (body, shoulder, neck, white cap): side grasps cp0..cp3 on the body, top-down grasps cp4/cp5 on
    the neck, "neck" at the neck."""
    c = rgb or rgb_of(color)
    body_h, shoulder_h, neck_top = 0.68 * height_m, 0.12 * height_m, 0.96 * height_m
    parts = (
        Parts(scene, density_kg_m3=300.0)
        .rolling_cylinder((0, 0, body_h / 2), radius_m, body_h / 2, c, axis="z")
        .rolling_cylinder((0, 0, body_h + shoulder_h / 2), 0.65 * radius_m, shoulder_h / 2, c, axis="z")
        .rolling_cylinder((0, 0, (body_h + shoulder_h + neck_top) / 2), 0.016, (neck_top - body_h - shoulder_h) / 2,
                          c, axis="z")
        .rolling_cylinder((0, 0, (neck_top + height_m) / 2), 0.018, (height_m - neck_top) / 2, PALETTE["white"],
                          axis="z")
    )
    neck_z = 0.88 * height_m
    grasps = [*_side_ring(0.45 * height_m), top_grasp((0, 0, neck_z), 0.0), top_grasp((0, 0, neck_z), math.pi / 2)]
    points = numbered("cp", grasps)
    points["neck"] = sapien.Pose([0, 0, neck_z])
    return finish(parts, name, pose, label="bottle", category="round", size_m=(2 * radius_m, 2 * radius_m, height_m),
                  color=color, points=points, static=static)


def make_pad(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "blue",
    rgb: RGB | None = None,
    size_m: tuple[float, float, float] = (0.1, 0.1, 0.01),
    static: bool = False,
) -> SimObject:
    """A thin flat pad (a place target): fp1 is its top centre."""
    sx, sy, sz = size_m
    parts = Parts(scene, density_kg_m3=300.0).box((0, 0, sz / 2), (sx / 2, sy / 2, sz / 2), rgb or rgb_of(color))
    return finish(parts, name, pose, label="pad", category="block", size_m=size_m, color=color, points={},
                  static=static)


def make_scale(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "grey",
    rgb: RGB | None = None,
    side_m: float = 0.16,
    static: bool = False,
) -> SimObject:
    """A kitchen scale: a flat base with a silver weighing plate; fp1 ("top") is the plate's top centre."""
    base_h, plate_h = 0.025, 0.008
    parts = (
        Parts(scene, density_kg_m3=800.0)
        .box((0, 0, base_h / 2), (side_m / 2, side_m / 2, base_h / 2), rgb or rgb_of(color))
        .box((0, 0, base_h + plate_h / 2), (0.44 * side_m, 0.44 * side_m, plate_h / 2), PALETTE["silver"])
    )
    h = base_h + plate_h
    return finish(parts, name, pose, label="scale", category="block", size_m=(side_m, side_m, h), color=color,
                  points={"top": sapien.Pose([0, 0, h], [0, 1, 0, 0])}, static=static)


def make_roller(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "beige",
    rgb: RGB | None = None,
    radius_m: float = 0.0175,
    length_m: float = 0.23,
    grasp_offset_m: float = 0.085,
    static: bool = False,
) -> SimObject:
    """A rolling pin lying along its x axis; cp0/cp1 are top-down grasps at ∓``grasp_offset_m`` along the axis,
    fingers across it — one per arm."""
    parts = Parts(scene, density_kg_m3=500.0).rolling_cylinder((0, 0, radius_m), radius_m, length_m / 2,
                                                               rgb or rgb_of(color), axis="x")
    grasps = [top_grasp((-grasp_offset_m, 0, radius_m), math.pi / 2), top_grasp((grasp_offset_m, 0, radius_m),
                                                                                math.pi / 2)]
    return finish(parts, name, pose, label="roller", category="round", size_m=(length_m, 2 * radius_m, 2 * radius_m),
                  color=color, points=numbered("cp", grasps), static=static)


def make_bell(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "silver",
    rgb: RGB | None = None,
    static: bool = False,
) -> SimObject:
    """A desk bell: black base, dome and button; "button" (= "head") is the top of the button, z down;
    cp0/cp1 are top-down grasps across the dome."""
    base_r, base_h, dome_r, button_h = 0.045, 0.012, 0.032, 0.01
    top = 2 * dome_r + button_h
    parts = (
        Parts(scene, density_kg_m3=900.0)
        .cylinder((0, 0, base_h / 2), base_r, base_h / 2, PALETTE["black"])
        .sphere((0, 0, dome_r), dome_r, rgb or rgb_of(color))
        .cylinder((0, 0, 2 * dome_r + button_h / 2 - 0.002), 0.006, button_h / 2 + 0.002, PALETTE["black"])
    )
    button = sapien.Pose([0, 0, top], [0, 1, 0, 0])
    points = numbered("cp", [top_grasp((0, 0, dome_r + 0.01), 0.0), top_grasp((0, 0, dome_r + 0.01), math.pi / 2)])
    points.update(button=button, head=button)
    return finish(parts, name, pose, label="bell", category="round", size_m=(2 * base_r, 2 * base_r, top),
                  color=color, points=points, static=static)


def make_bread(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "beige",
    rgb: RGB | None = None,
    length_m: float = 0.12,
    static: bool = False,
) -> SimObject:
    """A loaf along x: a flat base with a rounded top; cp0/cp1 are top-down grasps across its width."""
    c = rgb or rgb_of(color)
    r = 0.028
    parts = (
        Parts(scene, density_kg_m3=250.0)
        .box((0, 0, 0.015), (length_m / 2, 0.03, 0.015), c)
        .capsule((0, 0, 0.03), r, length_m / 2 - r, c, axis="x")
    )
    h = 0.03 + r
    grasps = [top_grasp((0, 0, 0.035), math.pi / 2), top_grasp((0, 0, 0.035), -math.pi / 2)]
    return finish(parts, name, pose, label="bread", category="irregular", size_m=(length_m, 0.06, h), color=color,
                  points=numbered("cp", grasps), static=static)


def make_toy(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "yellow",
    rgb: RGB | None = None,
    static: bool = False,
) -> SimObject:
    """A small toy figure (body + head): cp0/cp1 top-down grasps on the head, cp2..cp5 side grasps on the body."""
    c = rgb or rgb_of(color)
    body_h, head_r = 0.035, 0.015
    parts = (
        Parts(scene, density_kg_m3=400.0)
        .box((0, 0, body_h / 2), (0.02, 0.015, body_h / 2), c)
        .sphere((0, 0, body_h + head_r - 0.002), head_r, c)
    )
    h = body_h + 2 * head_r - 0.002
    head_z = body_h + head_r - 0.002
    grasps = [top_grasp((0, 0, head_z), 0.0), top_grasp((0, 0, head_z), math.pi / 2), *_side_ring(body_h / 2)]
    points = numbered("cp", grasps)
    points["head"] = sapien.Pose([0, 0, head_z])
    return finish(parts, name, pose, label="toy", category="irregular", size_m=(0.04, 0.03, h), color=color,
                  points=points, static=static)


def make_burger(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "beige",
    rgb: RGB | None = None,
    static: bool = False,
) -> SimObject:
    """A burger Ø0.07 × 0.03 (bun, patty, bun): cp0/cp1 top-down grasps."""
    bun = rgb or rgb_of(color)
    parts = (
        Parts(scene, density_kg_m3=400.0)
        .cylinder((0, 0, 0.005), 0.035, 0.005, bun)
        .cylinder((0, 0, 0.014), 0.036, 0.004, PALETTE["brown"])
        .cylinder((0, 0, 0.024), 0.035, 0.006, bun)
    )
    grasps = [top_grasp((0, 0, 0.015), 0.0), top_grasp((0, 0, 0.015), math.pi / 2)]
    return finish(parts, name, pose, label="burger", category="round", size_m=(0.072, 0.072, 0.03), color=color,
                  points=numbered("cp", grasps), static=static)


def make_fries_box(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "red",
    rgb: RGB | None = None,
    static: bool = False,
) -> SimObject:
    """A fries box 0.07 × 0.03 × 0.095 (box with fries sticking out): cp0/cp1 top-down grasps across its thin side,
    cp2/cp3 side grasps from ∓y."""
    box_h, fries_h = 0.075, 0.02
    parts = Parts(scene, density_kg_m3=300.0).box((0, 0, box_h / 2), (0.035, 0.015, box_h / 2), rgb or rgb_of(color))
    for i, x in enumerate((-0.02, 0.0, 0.02)):
        parts.box((x, 0.0, box_h + fries_h / 2 - 0.004 * (i % 2)), (0.006, 0.006, fries_h / 2), PALETTE["yellow"])
    grasps = [
        top_grasp((0, 0, box_h - 0.02), math.pi / 2),
        top_grasp((0, 0, box_h - 0.02), -math.pi / 2),
        side_grasp((0, 0, 0.5 * box_h), math.pi / 2),
        side_grasp((0, 0, 0.5 * box_h), -math.pi / 2),
    ]
    return finish(parts, name, pose, label="fries", category="block", size_m=(0.07, 0.03, box_h + fries_h),
                  color=color, points=numbered("cp", grasps), static=static)
