"""Domain randomisation of a scene: table and wall textures, light colours and a cluttered table.

``with_domain(spec, domain)`` wraps a scene so that, after its own objects are placed, the table and wall get
procedural textures, the lights random colours and (if the domain says so) the table distractors. All of it is
drawn from generators seeded by the scene's name and a draw of the scene's own generator after the scene's
draws, so the scene's objects stay where they were without randomisation and a world stays a pure function of
(scene, seed). What ran is
recorded in the scene metadata under ``domain`` (and the distractor names under ``clutter``).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import sapien

from mallvi.sim_bridge.distractors import ClutterSpec, place_distractors
from mallvi.sim_bridge.scene_spec import SceneContents, SceneSpec
from mallvi.sim_bridge.textures import TEXTURE_COUNT, apply_texture, texture_family


@dataclass(frozen=True)
class VisualSpec:
    """The original's visual randomisation switches (its ``domain_randomization`` block).

    ``random_background``: a random texture on the table and on the wall, each kept plain with probability
    ``clean_background_rate``. ``random_light``: every light gets a random colour (each channel U[0, 1]); with
    probability ``crazy_light_rate`` the ambient light is also shifted by U[-0.1, 0.1] per channel.
    """

    random_background: bool = True
    clean_background_rate: float = 0.02
    random_light: bool = True
    crazy_light_rate: float = 0.02


@dataclass(frozen=True)
class DomainSpec:
    """A scene's randomisation: ``profile`` names the original config it follows; ``clutter`` None = clean."""

    profile: str
    visual: VisualSpec | None = VisualSpec()
    clutter: ClutterSpec | None = None


def with_domain(spec: SceneSpec, domain: DomainSpec) -> SceneSpec:
    """``spec`` with ``domain`` applied after its objects are built (same name, arm spacing and tags)."""
    inner = spec.build

    def build(scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        contents = inner(scene, rng, table_top_z)
        root = np.random.SeedSequence([int(rng.integers(0, 2**63 - 1)), zlib.crc32(spec.name.encode())])
        visual_seed, clutter_seed = root.spawn(2)
        prior = dict(contents.metadata.get("domain") or {})  # a shared scene's own randomisation
        record: dict[str, Any] = {**prior, "profile": domain.profile, "table_top_z_m": round(float(table_top_z), 5)}
        if domain.visual is not None:
            record.update(randomize_visuals(scene, np.random.default_rng(visual_seed), domain.visual))
        record["cluttered"] = bool(prior.get("cluttered")) or domain.clutter is not None
        if domain.clutter is not None:
            placed = place_distractors(scene, np.random.default_rng(clutter_seed), table_top_z, domain.clutter,
                                       contents.objects.values())  # fmt: skip
            contents.objects.update(placed.objects)
            contents.metadata["clutter"] = sorted(placed.objects)
            record["distractors"] = placed.record()
            record["distractors"]["max"] = domain.clutter.max_count
        contents.metadata["domain"] = record
        return contents

    return replace(spec, build=build, extra={**spec.extra, "domain": domain.profile})


def randomize_visuals(scene: sapien.Scene, rng: np.random.Generator, spec: VisualSpec) -> dict[str, Any]:
    """Apply ``spec`` to the scene's table, wall and lights; returns what was drawn.

    Every draw happens whether or not the scene can be seen, so a world without cameras gets the same
    distractors as one with them; textures are only uploaded when a camera exists (they cost a render context).
    """
    out: dict[str, Any] = {}
    if spec.random_background:
        visible = bool(scene.render_system.cameras)
        for surface in ("table", "wall"):
            tid = int(rng.integers(TEXTURE_COUNT))
            plain = bool(rng.random() <= spec.clean_background_rate)
            out[f"{surface}_texture"] = None if plain else f"{texture_family(tid)}-{tid}"
            entity = _entity(scene, surface)
            if not plain and visible and entity is not None:
                apply_texture(entity, tid)
    if spec.random_light:
        crazy = bool(rng.random() < spec.crazy_light_rate)
        colors = []
        for light in scene.render_system.lights:
            rgb = [float(v) for v in rng.random(3)]
            light.color = rgb
            colors.append([round(v, 3) for v in rgb])
        ambient = np.asarray(scene.ambient_light, dtype=float)
        if crazy:
            ambient = np.clip(ambient + rng.uniform(-0.1, 0.1, size=3), 0.0, 1.0)
            scene.set_ambient_light([float(v) for v in ambient])
        out["light"] = {"colors": colors, "ambient": [round(float(v), 3) for v in ambient], "crazy": crazy}
    return out


def _entity(scene: sapien.Scene, name: str) -> sapien.Entity | None:
    return next((e for e in scene.entities if e.name == name), None)
