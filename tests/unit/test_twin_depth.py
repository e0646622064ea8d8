"""The twin's depth-sensor model: noise growing with distance, holes at depth edges and on dark surfaces."""

from __future__ import annotations

import numpy as np

from mallvi.twin.depth_noise import StereoDepthModel


def test_depth_noise_grows_with_the_square_of_distance() -> None:
    model = StereoDepthModel()
    rng = np.random.default_rng(0)
    grey = np.full((200, 200, 3), 128, np.uint8)
    errors = {}
    for z in (0.5, 1.0, 2.0):
        depth = np.full((200, 200), z, np.float32)
        errors[z] = float(np.std(model.apply(depth, grey, 380.0, rng) - z))
    assert 3.5 < errors[2.0] / errors[1.0] < 4.5
    assert 3.5 < errors[1.0] / errors[0.5] < 4.5
    assert 0.002 < errors[1.0] < 0.008  # a D435 at 1 m: a few millimetres


def test_a_depth_step_and_a_dark_patch_leave_holes_and_flat_bright_surfaces_do_not() -> None:
    model = StereoDepthModel()
    depth = np.full((100, 100), 1.0, np.float32)
    depth[:, 50:] = 0.8  # a 20 cm step at column 50
    rgb = np.full((100, 100, 3), 200, np.uint8)
    rgb[10:30, 10:30] = 5  # a black patch
    out = model.apply(depth, rgb, 380.0, np.random.default_rng(1))
    assert np.all(out[:, 49:51] == 0)
    assert np.mean(out[10:30, 10:30] == 0) > 0.5
    assert np.all(out[40:100, 5:45] > 0) and np.all(out[:, 55:] > 0)


def test_shiny_pixels_drop_out_and_matte_ones_keep_their_depth() -> None:
    model = StereoDepthModel()
    depth = np.full((100, 100), 0.7, np.float32)
    rgb = np.full((100, 100, 3), 200, np.uint8)
    shininess = np.zeros((100, 100), np.float32)
    shininess[20:60, 20:60] = 1.0  # a metal part
    shininess[70:90, 70:90] = 0.2  # satin plastic: below the shiny level
    out = model.apply(depth, rgb, 380.0, np.random.default_rng(2), shininess)
    assert 0.7 < float(np.mean(out[20:60, 20:60] == 0)) < 0.9
    assert np.all(out[70:90, 70:90] > 0) and np.all(out[:15, :] > 0)
