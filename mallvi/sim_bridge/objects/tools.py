"""Objects with a handle or hook: mug, rack with a hook, microphone (handle + head)."""

from __future__ import annotations

import math

import sapien

from mallvi.sim_bridge.objects.palette import PALETTE, RGB, rgb_of
from mallvi.sim_bridge.objects.parts import Parts, angled_grasp, finish, numbered, side_grasp, top_grasp
from mallvi.sim_bridge.scene_spec import SimObject

_QUARTER = (0.0, math.pi / 2, math.pi, -math.pi / 2)


def make_mug(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "white",
    rgb: RGB | None = None,
    radius_m: float = 0.04,
    height_m: float = 0.09,
    static: bool = False,
) -> SimObject:
    """A hollow mug with a C-shaped handle on its +x side.

    Points: "handle" is the centre of the handle's opening (the point that goes onto a hook; the opening faces
    ±y, so a hook along the mug's y axis passes through it);
    cp0 = top-down grasp on the rim opposite the handle; cp1 = a grasp on the handle bar approaching from +x;
    cp2..cp5 side grasps on the body; "rim" = cp0 (``upright_actor`` pinches a lying mug's rim).
    """
    c = rgb or rgb_of(color)
    wall = 0.006
    parts = Parts(scene, density_kg_m3=600.0).cylinder((0, 0, wall / 2), radius_m, wall / 2, c)
    parts.ring(0.0, height_m, radius_m - wall / 2, radius_m - wall / 2, wall, c, segments=14)
    reach, t = 0.03, 0.008  # the handle sticks out 3 cm from the wall; bar thickness
    z_lo, z_hi = 0.025, height_m - 0.02
    for z in (z_lo, z_hi):
        parts.box((radius_m + reach / 2 - 0.002, 0, z), (reach / 2 + 0.002, t / 2, t / 2), c)
    bar_x = radius_m + reach - t / 2
    parts.box((bar_x, 0, (z_lo + z_hi) / 2), (t / 2, t / 2, (z_hi - z_lo) / 2 + t / 2), c)
    # The handle point is the centre of the handle's opening: the spot a hook passes through.
    handle = sapien.Pose([radius_m + (reach - t) / 2, 0, (z_lo + z_hi) / 2])
    grasps = [
        top_grasp((-(radius_m - wall / 2), 0, height_m - 0.015), 0.0),
        side_grasp((bar_x, 0, (z_lo + z_hi) / 2), math.pi),
        *[side_grasp((0, 0, 0.5 * height_m), a) for a in _QUARTER],
    ]
    points = numbered("cp", grasps)
    points["handle"] = handle
    points["rim"] = grasps[0]
    points["center"] = sapien.Pose([0, 0, wall])
    return finish(parts, name, pose, label="mug", category="irregular",
                  size_m=(2 * radius_m + reach, 2 * radius_m, height_m), color=color, points=points, static=static,
                  bbox_center=(reach / 2, 0, height_m / 2))


def make_rack(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "brown",
    rgb: RGB | None = None,
    height_m: float = 0.26,
    hook_height_m: float = 0.20,
    hook_length_m: float = 0.09,
    hook_tilt_rad: float = math.radians(20.0),
    static: bool = False,
) -> SimObject:
    """A mug rack: a heavy base, a post and a hook rod pointing towards -x and tilted upwards.

    Points: "hook" is on the rod's axis 60% of the way out (where a mug handle should hang), "hook_tip" its end;
    cp0/cp1 are top-down grasps on the top of the post.
    The 20° tilt is below the friction angle (atan 0.5 ≈ 27°), so a handle hung on the hook stays where it is put.
    """
    c = rgb or rgb_of(color)
    base_h, post_r, hook_r = 0.015, 0.01, 0.005
    parts = (
        Parts(scene, density_kg_m3=700.0)
        .box((0, 0, base_h / 2), (0.06, 0.06, base_h / 2), c, density_kg_m3=4000.0)
        .cylinder((0, 0, (base_h + height_m) / 2), post_r, (height_m - base_h) / 2, c)
    )
    # The rod starts at the post's axis and runs along -x rotated up by hook_tilt_rad (rotation about +y).
    ux, uz = -math.cos(hook_tilt_rad), math.sin(hook_tilt_rad)
    half = hook_length_m / 2
    q_rod = (math.cos((math.pi + hook_tilt_rad) / 2), 0.0, math.sin((math.pi + hook_tilt_rad) / 2), 0.0)
    parts.cylinder((ux * half, 0, hook_height_m + uz * half), hook_r, half, PALETTE["silver"], quat=q_rod)
    along = 0.6 * hook_length_m
    points = {
        "hook": sapien.Pose([ux * along, 0, hook_height_m + uz * along]),
        "hook_tip": sapien.Pose([ux * hook_length_m, 0, hook_height_m + uz * hook_length_m]),
        "cp0": top_grasp((0, 0, height_m - 0.015), math.pi / 2),
        "cp1": top_grasp((0, 0, height_m - 0.015), 0.0),
    }
    x_min = min(-0.06, ux * hook_length_m - hook_r * math.sin(hook_tilt_rad))
    return finish(parts, name, pose, label="rack", category="irregular", size_m=(0.06 - x_min, 0.12, height_m),
                  color=color, points=points, static=static, bbox_center=((0.06 + x_min) / 2, 0, height_m / 2))


def make_microphone(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    color: str = "black",
    rgb: RGB | None = None,
    static: bool = False,
) -> SimObject:
    """An upright microphone ~0.16 m tall: a small foot, a handle and a grey spherical head.

    Points: "handle" (middle of the handle), "head" (centre of the head); cp0..cp3 side grasps low on the handle,
    cp4..cp7 high on the handle (so a second gripper can take it over), cp8/cp9 top-down grasps on the head,
    cp10..cp13 grasps on the handle approaching 45° from above.
    """
    c = rgb or rgb_of(color)
    foot_h, handle_top, head_r = 0.012, 0.12, 0.024
    parts = (
        Parts(scene, density_kg_m3=500.0)
        .cylinder((0, 0, foot_h / 2), 0.032, foot_h / 2, c, density_kg_m3=2500.0)
        .cylinder((0, 0, (foot_h + handle_top) / 2), 0.015, (handle_top - foot_h) / 2, c)
        .sphere((0, 0, handle_top + head_r - 0.004), head_r, PALETTE["grey"], density_kg_m3=200.0)
    )
    h = handle_top + 2 * head_r - 0.004
    head_z = handle_top + head_r - 0.004
    grasps = [side_grasp((0, 0, 0.045), a) for a in _QUARTER] + [side_grasp((0, 0, 0.095), a) for a in _QUARTER]
    grasps += [top_grasp((0, 0, head_z), 0.0), top_grasp((0, 0, head_z), math.pi / 2)]
    grasps += [angled_grasp((0, 0, 0.06), a, math.pi / 4) for a in _QUARTER]
    points = numbered("cp", grasps)
    points["handle"] = sapien.Pose([0, 0, (foot_h + handle_top) / 2])
    points["head"] = sapien.Pose([0, 0, head_z])
    return finish(parts, name, pose, label="microphone", category="irregular", size_m=(0.064, 0.064, h), color=color,
                  points=points, static=static)
