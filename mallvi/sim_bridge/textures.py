"""Procedural surface textures for the table and the wall, made in code from a texture id (nothing is loaded).

A texture id is an integer in ``[0, TEXTURE_COUNT)``; ``texture_rgb(id)`` is a pure function of it, so an
episode records only the id. The families imitate the material photos the original benchmark draws from (wood
grain, woven cloth, stone speckle, tiles, stripes, smooth paint); saturation stays moderate, as on such
materials.
"""

from __future__ import annotations

import colorsys

import numpy as np
import sapien
from numpy.typing import NDArray

TEXTURE_COUNT = 64
TEXTURE_SIZE_PX = 128
FAMILIES: tuple[str, ...] = ("wood", "cloth", "stone", "tiles", "stripes", "paint")


def texture_family(texture_id: int) -> str:
    """The family of a texture id (``wood``, ``cloth``, ...)."""
    return FAMILIES[_check(texture_id) % len(FAMILIES)]


def texture_rgb(texture_id: int, size_px: int = TEXTURE_SIZE_PX) -> NDArray[np.uint8]:
    """The texture's image, ``size_px`` × ``size_px`` × 4 (RGBA, uint8)."""
    rng = np.random.default_rng(_check(texture_id) + 7919)
    family = texture_family(texture_id)
    base = _base_color(rng)
    second = _base_color(rng)
    v, u = np.mgrid[0:size_px, 0:size_px].astype(float) / size_px
    if family == "wood":
        rings = np.sin(2 * np.pi * (u * rng.uniform(6, 14) + 0.3 * np.sin(2 * np.pi * v * rng.uniform(1, 3))))
        mix = 0.5 + 0.5 * rings
    elif family == "cloth":
        n = int(rng.integers(24, 48))
        mix = 0.5 + 0.25 * (np.sign(np.sin(np.pi * n * u)) * np.sign(np.sin(np.pi * n * v)))
    elif family == "stone":
        mix = rng.random((size_px, size_px))
    elif family == "tiles":
        n = int(rng.integers(4, 10))
        grout = (np.mod(u * n, 1.0) < 0.06) | (np.mod(v * n, 1.0) < 0.06)
        mix = np.where(grout, 1.0, 0.15 * rng.random((size_px, size_px)))
    elif family == "stripes":
        mix = (np.mod(u * int(rng.integers(3, 12)), 1.0) < 0.5).astype(float)
    else:  # paint: one colour with a faint mottle
        mix = 0.1 * rng.random((size_px, size_px))
    rgb = (1.0 - mix[..., None]) * base + mix[..., None] * second
    out = np.empty((size_px, size_px, 4), dtype=np.uint8)
    out[..., :3] = np.clip(rgb * 255.0, 0, 255).astype(np.uint8)
    out[..., 3] = 255
    return out


def apply_texture(entity: sapien.Entity, texture_id: int) -> None:
    """Put texture ``texture_id`` on every render shape of ``entity`` (its base colour becomes white)."""
    tex = sapien.render.RenderTexture2D(texture_rgb(texture_id), "R8G8B8A8Unorm", srgb=True)
    body = entity.find_component_by_type(sapien.render.RenderBodyComponent)
    if body is None:
        raise ValueError(f"entity {entity.name!r} has no render body to texture")
    for shape in body.render_shapes:
        mat = shape.material
        mat.base_color = [1.0, 1.0, 1.0, 1.0]
        mat.base_color_texture = tex


def _base_color(rng: np.random.Generator) -> NDArray[np.float64]:
    h, s, v = rng.random(), rng.uniform(0.05, 0.45), rng.uniform(0.35, 0.9)
    return np.asarray(colorsys.hsv_to_rgb(h, s, v), dtype=float)


def _check(texture_id: int) -> int:
    if not 0 <= int(texture_id) < TEXTURE_COUNT:
        raise ValueError(f"texture id {texture_id} outside [0, {TEXTURE_COUNT})")
    return int(texture_id)
