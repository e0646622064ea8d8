"""Small clutter objects (distractors): cup, eraser, tape roll, die, marker, sponge and the toy figure."""

from __future__ import annotations

import sapien

from mallvi.sim_bridge.objects.basic import make_toy
from mallvi.sim_bridge.objects.palette import RGB, rgb_of
from mallvi.sim_bridge.objects.parts import Parts, finish, top_grasp
from mallvi.sim_bridge.scene_spec import SimObject

# kind -> ("box" | "cylinder", size x/diameter, size y, height, default colour)
_SIMPLE: dict[str, tuple[str, float, float, float, str]] = {
    "cup": ("cylinder", 0.05, 0.05, 0.06, "orange"),
    "eraser": ("box", 0.05, 0.022, 0.012, "pink"),
    "tape": ("cylinder", 0.06, 0.06, 0.02, "grey"),
    "die": ("box", 0.02, 0.02, 0.02, "white"),
    "marker": ("box", 0.11, 0.015, 0.015, "purple"),
    "sponge": ("box", 0.07, 0.045, 0.025, "yellow"),
}

CLUTTER_KINDS: tuple[str, ...] = (*sorted(_SIMPLE), "toy")
_TOY_SIZE_M = (0.04, 0.03, 0.063)  # make_toy's extent


def clutter_extent_m(kind: str) -> tuple[float, float, float]:
    """The x, y, z extent (metres, own frame) of a clutter object of ``kind``."""
    if kind == "toy":
        return _TOY_SIZE_M
    if kind not in _SIMPLE:
        raise ValueError(f"unknown clutter kind {kind!r}; known kinds: {', '.join(CLUTTER_KINDS)}")
    _shape, sx, sy, h, _color = _SIMPLE[kind]
    return (sx, sy, h)


def make_clutter(
    scene: sapien.Scene,
    name: str,
    pose: sapien.Pose,
    *,
    kind: str = "cup",
    color: str | None = None,
    rgb: RGB | None = None,
    static: bool = False,
) -> SimObject:
    """One clutter object of ``kind`` (one of CLUTTER_KINDS); its label is the kind, cp0 a top-down grasp."""
    if kind == "toy":
        return make_toy(scene, name, pose, color=color or "yellow", rgb=rgb, static=static)
    if kind not in _SIMPLE:
        raise ValueError(f"unknown clutter kind {kind!r}; known kinds: {', '.join(CLUTTER_KINDS)}")
    shape, sx, sy, h, default_color = _SIMPLE[kind]
    color = color or default_color
    c = rgb or rgb_of(color)
    parts = Parts(scene, density_kg_m3=400.0)
    if shape == "box":
        parts.box((0, 0, h / 2), (sx / 2, sy / 2, h / 2), c)
    else:
        parts.cylinder((0, 0, h / 2), sx / 2, h / 2, c)
    grasp_yaw = 1.5707963267948966 if sy < sx else 0.0  # fingers across the narrow side
    points = {"cp0": top_grasp((0, 0, max(h - 0.02, h / 2)), grasp_yaw)}
    return finish(parts, name, pose, label=kind, category="block" if shape == "box" else "round",
                  size_m=(sx, sy, h), color=color, points=points, static=static)


