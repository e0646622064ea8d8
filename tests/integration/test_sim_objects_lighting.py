"""Randomised lighting: seeded, and it visibly changes what the camera renders."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sapien

from mallvi.sim_bridge.randomization import apply_lighting, sample_lighting


def test_lighting_is_seeded_and_changes_the_image() -> None:
    assert sample_lighting(np.random.default_rng(5)) == sample_lighting(np.random.default_rng(5))
    assert sample_lighting(np.random.default_rng(5)) != sample_lighting(np.random.default_rng(6))
    # One scene re-lit several times (apply_lighting re-aims the scene's own lights).
    scene = sapien.Scene()
    scene.set_ambient_light([0.45, 0.45, 0.45])
    scene.add_directional_light([0.3, 0.5, -1.0], [0.9, 0.9, 0.85])
    b = scene.create_actor_builder()
    b.add_box_visual(half_size=[0.5, 0.5, 0.01], material=[0.7, 0.7, 0.7])
    b.build_static("floor")
    cam = scene.add_camera("c", 64, 48, 1.0, 0.01, 10.0)
    cam.entity.set_pose(sapien.Pose([0, 0, 1.0], [math.sqrt(0.5), 0, math.sqrt(0.5), 0]))

    def brightness(seed: int | None) -> float:
        if seed is not None:
            apply_lighting(scene, sample_lighting(np.random.default_rng(seed)))
        scene.update_render()
        cam.take_picture()
        return float(np.asarray(cam.get_picture("Color"))[..., :3].mean())

    base = brightness(None)
    first, second, first_again = brightness(1), brightness(2), brightness(1)
    assert first == pytest.approx(first_again, abs=1e-6), "same lighting spec, same image"
    assert max(abs(first - base), abs(second - base)) > 0.01, "randomised lighting does not change the image"
    assert abs(first - second) > 0.005, "two seeds light the scene the same"
