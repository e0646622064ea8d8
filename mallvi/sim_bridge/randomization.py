"""Seeded randomisation for scenes: placements with spacing, yaw, colours and lighting (distractors:
distractors.py; textures and light colours of the original's configs: domain.py).

Every function draws only from the ``np.random.Generator`` it is given, so a scene built from these helpers is a
pure function of (scene name, seed). Placement failures raise ``SceneSetupError`` (the benchmark skips the seed).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import sapien

from mallvi.contracts.geometry import ArmSide
from mallvi.sim_bridge.objects import BLOCK_COLORS, RGB, rgb_of, yaw_quat
from mallvi.sim_bridge.scene_spec import SceneSetupError, SimObject

Vec3 = tuple[float, float, float]


@dataclass(frozen=True)
class Region:
    """An axis-aligned rectangle on the table, world frame, metres."""

    x_min: float
    x_max: float
    y_min: float
    y_max: float

    def __post_init__(self) -> None:
        if not (self.x_min <= self.x_max and self.y_min <= self.y_max):
            raise ValueError(f"empty region {self}")

    def sample(self, rng: np.random.Generator) -> tuple[float, float]:
        return float(rng.uniform(self.x_min, self.x_max)), float(rng.uniform(self.y_min, self.y_max))

    def contains(self, x: float, y: float, tol_m: float = 1e-9) -> bool:
        return (self.x_min - tol_m <= x <= self.x_max + tol_m) and (self.y_min - tol_m <= y <= self.y_max + tol_m)

    def as_tuple(self) -> tuple[float, float, float, float]:
        return (self.x_min, self.x_max, self.y_min, self.y_max)


@dataclass(frozen=True)
class KeepOut:
    """A disc on the table that sampled positions must stay out of."""

    x: float
    y: float
    radius_m: float


def random_side(rng: np.random.Generator) -> ArmSide:
    """Left (x < 0) or right (x > 0) with equal chance."""
    return "left" if rng.random() < 0.5 else "right"


def side_region(abs_x: tuple[float, float], y: tuple[float, float], side: ArmSide) -> Region:
    """The region |x| ∈ ``abs_x`` on one side of the centre line (left = negative x), y ∈ ``y``."""
    lo, hi = abs_x
    return Region(-hi, -lo, *y) if side == "left" else Region(lo, hi, *y)


def sample_positions(
    rng: np.random.Generator,
    regions: Sequence[Region],
    *,
    min_spacing_m: float,
    keep_out: Sequence[KeepOut] = (),
    max_tries: int = 200,
    rounds: int = 5,
) -> list[tuple[float, float]]:
    """One (x, y) per region, every pair at least ``min_spacing_m`` apart and outside every keep-out disc.

    Rejection sampling with at most ``max_tries`` draws per object; when an object finds no spot the whole set is
    drawn again (up to ``rounds`` times, since early objects can block later ones). Raises SceneSetupError when it
    gives up.
    """
    failed_at = 0
    for _ in range(rounds):
        placed: list[tuple[float, float]] = []
        for region in regions:
            for _ in range(max_tries):
                x, y = region.sample(rng)
                if all(math.hypot(x - px, y - py) >= min_spacing_m for px, py in placed) and all(
                    math.hypot(x - k.x, y - k.y) >= k.radius_m for k in keep_out
                ):
                    placed.append((x, y))
                    break
            else:
                break
        if len(placed) == len(regions):
            return placed
        failed_at = len(placed)
    raise SceneSetupError(
        f"could not place object {failed_at + 1} of {len(regions)} in {regions[failed_at].as_tuple()} with "
        f"{min_spacing_m} m spacing after {rounds} rounds of {max_tries} tries"
    )


def random_yaw(rng: np.random.Generator, max_abs_rad: float = math.pi) -> float:
    """A yaw angle drawn uniformly from [-max_abs_rad, max_abs_rad]."""
    return float(rng.uniform(-max_abs_rad, max_abs_rad))


def table_pose(x: float, y: float, table_top_z: float, yaw_rad: float = 0.0, lift_m: float = 0.001) -> sapien.Pose:
    """The pose of an object's bottom centre standing at (x, y) on the table, rotated ``yaw_rad`` about z.

    ``lift_m`` starts it a hair above the surface so it settles without initial contact.
    """
    return sapien.Pose([x, y, table_top_z + lift_m], list(yaw_quat(yaw_rad)))


def choose_colors(rng: np.random.Generator, n: int, choices: Sequence[str] = BLOCK_COLORS) -> list[str]:
    """``n`` distinct colour words drawn from ``choices``."""
    if n > len(choices):
        raise ValueError(f"asked for {n} distinct colours but only {len(choices)} are available")
    idx = rng.choice(len(choices), size=n, replace=False)
    return [choices[int(i)] for i in idx]


def jitter_rgb(rng: np.random.Generator, color: str | RGB, amount: float = 0.04) -> RGB:
    """The colour's RGB with each channel shifted by U[-amount, amount], clipped to [0, 1] (the hue word stays)."""
    base = np.asarray(rgb_of(color) if isinstance(color, str) else color, dtype=float)
    out = np.clip(base + rng.uniform(-amount, amount, size=3), 0.0, 1.0)
    return (float(out[0]), float(out[1]), float(out[2]))


@dataclass(frozen=True)
class LightingSpec:
    """Scene lighting: an ambient colour and directional lights as (direction, colour) in the world frame."""

    ambient_rgb: RGB
    directional: tuple[tuple[Vec3, RGB], ...]


DEFAULT_LIGHTING = LightingSpec(
    ambient_rgb=(0.5, 0.5, 0.5),
    directional=(((0.0, 0.5, -1.0), (0.8, 0.8, 0.8)), ((-0.5, -0.3, -1.0), (0.3, 0.3, 0.3))),
)


def sample_lighting(rng: np.random.Generator) -> LightingSpec:
    """Lighting around DEFAULT_LIGHTING: ambient 0.35..0.6 with a slight tint, a main light whose direction
    tilts up to ~30° and whose intensity is 0.6..1.0, and a weak fill light."""
    a = float(rng.uniform(0.35, 0.6))
    ambient = tuple(float(np.clip(a + t, 0.0, 1.0)) for t in rng.uniform(-0.03, 0.03, size=3))
    main_dir = (float(rng.uniform(-0.5, 0.5)), float(rng.uniform(-0.2, 0.7)), -1.0)
    k = float(rng.uniform(0.6, 1.0))
    main_rgb = tuple(float(np.clip(k + t, 0.0, 1.0)) for t in rng.uniform(-0.05, 0.05, size=3))
    fill = float(rng.uniform(0.1, 0.35))
    return LightingSpec(
        ambient_rgb=(ambient[0], ambient[1], ambient[2]),
        directional=(
            (main_dir, (main_rgb[0], main_rgb[1], main_rgb[2])),
            ((-main_dir[0], -0.3, -1.0), (fill, fill, fill)),
        ),
    )


def apply_lighting(scene: sapien.Scene, spec: LightingSpec, *, shadow: bool = False) -> None:
    """Apply ``spec`` to a scene: set the ambient light, re-aim and recolour the scene's directional lights in order,
    add any that are missing and switch off (colour 0) any beyond the spec's. Other light types are left alone."""
    scene.set_ambient_light(list(spec.ambient_rgb))
    existing = [
        light for light in scene.render_system.get_lights()
        if isinstance(light, sapien.render.RenderDirectionalLightComponent)
    ]
    for i, (direction, rgb) in enumerate(spec.directional):
        if i < len(existing):
            light = existing[i]
            light.color = list(rgb)
            light.pose = sapien.Pose(light.pose.p, sapien.math.shortest_rotation([1, 0, 0], list(direction)))
        else:
            scene.add_directional_light(list(direction), list(rgb), shadow=shadow)
    for light in existing[len(spec.directional):]:
        light.color = [0.0, 0.0, 0.0]


def footprint_radius_m(obj: SimObject) -> float:
    """Half the diagonal of the object's x-y extent: a disc that covers it at any yaw."""
    return 0.5 * math.hypot(obj.size_m[0], obj.size_m[1])


def keep_out_of(objects: Iterable[SimObject], margin_m: float = 0.03) -> list[KeepOut]:
    """Keep-out discs around objects' current positions (footprint radius + ``margin_m``)."""
    out = []
    for o in objects:
        p = o.pose.p
        out.append(KeepOut(float(p[0]), float(p[1]), footprint_radius_m(o) + margin_m))
    return out
