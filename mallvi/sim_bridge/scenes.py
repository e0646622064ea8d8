"""The scene registry and the built-in scenes (block scenes, Tier 1 grounding scenes, a free block scene).

One explicit registry: every built-in scene is registered by ``_register_builtins`` at the bottom of this module;
other modules add theirs with ``register_scene(spec)`` (a duplicate name is an error). A scene builder draws every
random choice from the generator it receives, so a scene is a pure function of (name, seed).

Positions respect the arms' reach (DESIGN.md): each arm reaches x from its edge to ±0.05 for y in -0.20…0.10, and
the middle strip |x| ≤ 0.10 for y ≤ 0.0. Deviations from BENCHMARK.md's ranges are stated in each description.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sapien

from mallvi.sim_bridge.distractors import Area, ClutterSpec
from mallvi.sim_bridge.domain import DomainSpec, with_domain
from mallvi.sim_bridge.objects import make_block, make_pad
from mallvi.sim_bridge.randomization import (
    KeepOut,
    Region,
    choose_colors,
    jitter_rgb,
    random_side,
    random_yaw,
    sample_positions,
    side_region,
    table_pose,
)
from mallvi.sim_bridge.scene_spec import SceneBuilder, SceneContents, SceneSetupError, SceneSpec, SimObject


class UnknownSceneError(KeyError):
    """A scene name that is not registered."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else "unknown scene"


class SceneRegistry:
    """Scenes by name; registering a name twice is an error."""

    def __init__(self) -> None:
        self._specs: dict[str, SceneSpec] = {}

    def register(self, spec: SceneSpec) -> SceneSpec:
        if not spec.name:
            raise ValueError("a scene needs a non-empty name")
        if spec.name in self._specs:
            raise ValueError(f"a scene named {spec.name!r} is already registered")
        self._specs[spec.name] = spec
        return spec

    def get(self, name: str) -> SceneSpec:
        try:
            return self._specs[name]
        except KeyError:
            known = ", ".join(sorted(self._specs)) or "none"
            raise UnknownSceneError(f"unknown scene {name!r}; known scenes: {known}") from None

    def names(self) -> list[str]:
        return sorted(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._specs


SCENES = SceneRegistry()


def register_scene(spec: SceneSpec) -> SceneSpec:
    """Add a scene to the shared registry; ValueError if its name is taken."""
    return SCENES.register(spec)


def get_scene(name: str) -> SceneSpec:
    """The registered scene called ``name``; UnknownSceneError (a KeyError) lists the known names."""
    return SCENES.get(name)


def scene_names() -> list[str]:
    """Names of all registered scenes, sorted."""
    return SCENES.names()


def build_scene(name: str, scene: sapien.Scene, seed: int, table_top_z: float) -> SceneContents:
    """Build scene ``name`` for ``seed`` into ``scene`` (a convenience for tools and tests; SimWorld seeds its own
    generator)."""
    return get_scene(name).build(scene, np.random.default_rng(seed), table_top_z)


# ---------------------------------------------------------------- shared pieces

CUBE_HALF_M = 0.025
STACK_CENTER_XY = (0.0, -0.13)
RANKING_TARGETS_XY = {"red_block": (-0.09, -0.13), "green_block": (0.0, -0.13), "blue_block": (0.09, -0.13)}
MAX_BLOCK_YAW_RAD = 0.75  # the original's yaw limit for its cubes


def _blocks(
    scene: sapien.Scene,
    rng: np.random.Generator,
    table_top_z: float,
    colors: Sequence[str],
    regions: Sequence[Region],
    *,
    half_m: float,
    min_spacing_m: float,
    keep_out: Sequence[KeepOut] = (),
) -> dict[str, SimObject]:
    """Cubes named "<colour>_block", one per region, spaced and yawed at random, with a slight colour jitter."""
    xy = sample_positions(rng, regions, min_spacing_m=min_spacing_m, keep_out=keep_out)
    out = {}
    for color, (x, y) in zip(colors, xy, strict=True):
        name = f"{color}_block"
        pose = table_pose(x, y, table_top_z, random_yaw(rng, MAX_BLOCK_YAW_RAD))
        out[name] = make_block(scene, name, pose, color=color, rgb=jitter_rgb(rng, color), half_size_m=(half_m,) * 3)
    return out


def _meta(objects: dict[str, SimObject], regions: Sequence[Region], table_top_z: float, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "task_objects": list(objects),
        "regions": {n: r.as_tuple() for n, r in zip(objects, regions, strict=True)},
        "table_top_z": table_top_z,
    }
    meta.update(extra)
    return meta


# ---------------------------------------------------------------- block scenes

_CENTRE_BLOCK_REGION = Region(-0.28, 0.28, -0.08, 0.05)
_STACK_KEEP_OUT = (KeepOut(*STACK_CENTER_XY, 0.08),)


def _build_stack(n: int, instruction: str) -> SceneBuilder:
    colors = ("red", "green", "blue")[:n]

    def build(scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        regions = [_CENTRE_BLOCK_REGION] * n
        objects = _blocks(scene, rng, table_top_z, colors, regions, half_m=CUBE_HALF_M, min_spacing_m=0.1,
                          keep_out=_STACK_KEEP_OUT)
        meta = _meta(objects, regions, table_top_z, block_size_m=2 * CUBE_HALF_M, stack_center_xy=STACK_CENTER_XY,
                     stack_order=[f"{c}_block" for c in colors], min_spacing_m=0.1, arm_allocation_threshold_m=0.1)
        return SceneContents(objects, instruction, meta)

    return build


def _ranking_solved(xy: Sequence[tuple[float, float]]) -> bool:
    (xr, yr), (xg, yg), (xb, yb) = xy
    pairs = [((xr, yr), (xg, yg)), ((xr, yr), (xb, yb)), ((xg, yg), (xb, yb))]
    aligned = all(abs(a[0] - b[0]) < 0.13 and abs(a[1] - b[1]) < 0.03 for a, b in pairs)
    return aligned and xr < xg < xb


def _build_ranking_rgb(scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
    half = float(rng.uniform(0.015, 0.025))
    regions = [Region(-0.28, 0.28, -0.08, 0.05)] * 3
    objects = _blocks(scene, rng, table_top_z, ("red", "green", "blue"), regions, half_m=half, min_spacing_m=0.1)
    xy = [(float(o.pose.p[0]), float(o.pose.p[1])) for o in objects.values()]
    if _ranking_solved(xy):
        raise SceneSetupError("blocks_ranking_rgb: the blocks already stand in the goal order")
    meta = _meta(objects, regions, table_top_z, block_half_size_m=half, targets_xy=RANKING_TARGETS_XY,
                 min_spacing_m=0.1, arm_allocation_threshold_m=0.1)
    return SceneContents(objects, "arrange the blocks in a row from left to right: red, green, blue", meta)


HANDOVER_BLOCK_HALF_M = (0.03, 0.03, 0.10)
_HANDOVER_BLOCK_REGION = Region(-0.25, -0.05, -0.08, 0.04)
HANDOVER_BLOCK_YAW_RAD = (0.19, 0.59)  # the original's 0.39 rad ± 0.2
_PAD_REGION = Region(0.10, 0.25, 0.0, 0.05)


def _build_handover(scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
    bx, by = _HANDOVER_BLOCK_REGION.sample(rng)
    px, py = _PAD_REGION.sample(rng)
    yaw = float(rng.uniform(*HANDOVER_BLOCK_YAW_RAD))
    block = make_block(scene, "red_block", table_pose(bx, by, table_top_z, yaw),
                       color="red", rgb=jitter_rgb(rng, "red"), half_size_m=HANDOVER_BLOCK_HALF_M)
    pad = make_pad(scene, "blue_pad", table_pose(px, py, table_top_z, lift_m=0.0), color="blue",
                   rgb=jitter_rgb(rng, "blue"), static=True)
    objects = {"red_block": block, "blue_pad": pad}
    meta = _meta(objects, [_HANDOVER_BLOCK_REGION, _PAD_REGION], table_top_z,
                 pad_top_z=table_top_z + pad.size_m[2], handover_point=(0.0, -0.05, table_top_z + 0.25),
                 arm_allocation_threshold_m=0.2)
    return SceneContents(objects, "hand the red block over from the left arm to the right arm and put it on the "
                                  "blue pad", meta)


def _build_blocks_free(scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
    n = int(rng.integers(3, 5))
    colors = choose_colors(rng, n)
    regions = [Region(-0.28, 0.28, -0.12, 0.05)] * n
    objects = _blocks(scene, rng, table_top_z, colors, regions, half_m=CUBE_HALF_M, min_spacing_m=0.1)
    meta = _meta(objects, regions, table_top_z, block_size_m=2 * CUBE_HALF_M, min_spacing_m=0.1,
                 arm_allocation_threshold_m=0.1)
    return SceneContents(objects, f"put the {colors[0]} block on top of the {colors[1]} block", meta)


# ---------------------------------------------------------------- Tier 1 grounding scenes

GROUNDING_INSTRUCTION = "for each block, say whether the left or the right arm should grasp it"
_GROUNDING_KEEP_OUT = (KeepOut(0.0, -0.10, 0.10),)  # the original keeps the spot in front of the robot free


def _sparse_blocks(
    scene: sapien.Scene, rng: np.random.Generator, table_top_z: float
) -> tuple[dict[str, SimObject], list[Region], float]:
    half = float(rng.uniform(0.015, 0.025))
    colors = ("red", "green", "blue")
    regions = [side_region((0.05, 0.28), (-0.08, 0.05), random_side(rng)) for _ in colors]
    objects = _blocks(scene, rng, table_top_z, colors, regions, half_m=half, min_spacing_m=0.1,
                      keep_out=_GROUNDING_KEEP_OUT)
    return objects, regions, half


def _sides(objects: dict[str, SimObject]) -> dict[str, str]:
    return {n: ("left" if float(o.pose.p[0]) < 0 else "right") for n, o in objects.items()}


def _build_grounding_sparse(scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
    objects, regions, half = _sparse_blocks(scene, rng, table_top_z)
    meta = _meta(objects, regions, table_top_z, block_half_size_m=half, min_spacing_m=0.1,
                 initial_sides=_sides(objects), score_sigma_m=0.025)
    return SceneContents(objects, GROUNDING_INSTRUCTION, meta)


def _build_grounding_dense(scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
    colors = ("red", "yellow", "blue", "green", "black")
    regions = [side_region((0.02, 0.28), (-0.16, 0.10), random_side(rng)) for _ in colors]
    objects = _blocks(scene, rng, table_top_z, colors, regions, half_m=CUBE_HALF_M, min_spacing_m=0.10)
    meta = _meta(objects, regions, table_top_z, block_half_size_m=CUBE_HALF_M, min_spacing_m=0.10,
                 initial_sides=_sides(objects), score_sigma_m=0.025)
    return SceneContents(objects, GROUNDING_INSTRUCTION, meta)


#: the original's cluttered spatial setting: blocks padded by 0.05 m, its ranking row kept free, our pedestals
SPATIAL_CLUTTER = ClutterSpec(
    padding_m=0.05,
    work_areas=(Area(-0.17, -0.22, 0.17, -0.12), Area(-0.45, -0.34, -0.25, -0.20), Area(0.25, -0.34, 0.45, -0.20)),
)


# ---------------------------------------------------------------- registration (the one place)


def _builtin_specs() -> list[SceneSpec]:
    return [
        SceneSpec(
            "stack_blocks_three", _build_stack(3, "stack the green block on the red block and the blue block on "
                                                  "the green block"),
            arm_spacing_m=0.7, tags=("st-bibench", "planning"),
            description="Red, green and blue 5 cm cubes at x ∈ [-0.28, 0.28], y ∈ [-0.08, 0.05], ≥ 0.1 m apart and "
                        "clear of the stacking centre (0, -0.13).",
        ),
        SceneSpec(
            "stack_blocks_two", _build_stack(2, "stack the green block on the red block"),
            arm_spacing_m=0.7, tags=("st-bibench", "fine"),
            description="Red and green 5 cm cubes, ranges as stack_blocks_three.",
        ),
        SceneSpec(
            "blocks_ranking_rgb", _build_ranking_rgb, arm_spacing_m=0.6, tags=("st-bibench", "planning"),
            description="Red, green, blue cubes of one half-size U[0.015, 0.025] at x ∈ [-0.28, 0.28], "
                        "y ∈ [-0.08, 0.05] (ours: y range chosen for reach), ≥ 0.1 m apart; a seed whose blocks "
                        "already satisfy the goal raises SceneSetupError.",
        ),
        SceneSpec(
            "handover_block", _build_handover, arm_spacing_m=0.7, tags=("st-bibench", "planning"),
            description="Red block 0.06×0.06×0.20 at x ∈ [-0.25, -0.05], y ∈ [-0.08, 0.04] (ours: the original's "
                        "y ∈ [0, 0.25] reaches beyond our arms), yaw ∈ [0.19, 0.59] rad; static blue pad "
                        "0.1×0.1×0.01 at x ∈ [0.10, 0.25], y ∈ [0.00, 0.05] (ours: the benchmark's y ∈ [0.15, 0.20] "
                        "is beyond our arms' reach of y ≤ 0.10).",
        ),
        SceneSpec(
            "grounding_sparse", _build_grounding_sparse, tags=("st-bibench", "grounding"),
            description="Red, green and blue cubes of one half-size U[0.015, 0.025], each on a random side, "
                        "|x| ∈ [0.05, 0.28], y ∈ [-0.08, 0.05], centres ≥ 0.1 m apart and ≥ 0.1 m from (0, -0.1).",
        ),
        SceneSpec(
            "grounding_dense", _build_grounding_dense, tags=("st-bibench", "grounding"),
            description="Five cubes (half-size 0.025; red, yellow, blue, green, black), each on a random side, "
                        "|x| ∈ [0.02, 0.28], y ∈ [-0.16, 0.10], centres ≥ 0.10 m apart.",
        ),
        with_domain(SceneSpec(
            "grounding_cluttered", _build_grounding_sparse, tags=("st-bibench", "grounding"),
            description="grounding_sparse plus up to 10 distractors (none at all with 2% chance) outside the cubes' "
                        "areas padded by 0.05 m and the ranking row in front of the robot.",
        ), DomainSpec("config_spatial_cluttered", visual=None, clutter=SPATIAL_CLUTTER)),
        SceneSpec(
            "blocks_free", _build_blocks_free, tags=("free",),
            description="Three or four 5 cm cubes of distinct random colours at x ∈ [-0.28, 0.28], "
                        "y ∈ [-0.12, 0.05], ≥ 0.1 m apart, for free instructions.",
        ),
    ]


def _register_builtins() -> None:
    for spec in _builtin_specs():
        SCENES.register(spec)


_register_builtins()
