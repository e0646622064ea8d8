"""A wall behind the table is no table-top object, whatever its colour (synthetic RGB-D frames, exact geometry)."""

from __future__ import annotations

import numpy as np

from mallvi.perception.background import behind_table, far_edge, footprint_spread_m, is_upright_sheet, is_wall_face
from mallvi.perception.detectors import make_detector
from mallvi.perception.pipeline import make_perception
from mallvi.perception.projection import points_world, support_z, world_z_image
from mallvi.perception.raised_regions import raised_regions
from mallvi.perception.synthetic import SynthBox, head_camera, render

K, T_WORLD_CAM = head_camera()
TABLE_Z = 0.74
BLOCK = SynthBox("green_block", (0.05, 0.0, TABLE_Z + 0.025), (0.05, 0.05, 0.05), "green")
#: green tiles on a shelf behind the table's far edge (y = 0.35): block-sized, their tops in view
SHELF = [SynthBox(f"tile_{i}", (x, 0.42, TABLE_Z + 0.02), (0.05, 0.04, 0.04), "green")
         for i, x in enumerate((-0.35, -0.1, 0.25))]  # fmt: skip


def test_the_green_block_is_the_only_green_block_with_green_tiles_behind_the_table() -> None:
    obs = render([BLOCK, *SHELF], K, T_WORLD_CAM, 640, 360, table_z=TABLE_Z)
    # the tiles are in view and stand clear of the table: without the far-edge test they read as blocks too
    assert obs.seg is not None and all(bool((obs.seg == i + 2).any()) for i in range(len(SHELF)))
    dets = make_detector("color").detect(obs, ["green block"])
    assert len(dets) == 1, [(d.label, d.box_xyxy) for d in dets]
    x0, y0, x1, y1 = (int(c) for c in dets[0].box_xyxy)
    assert obs.seg[(y0 + y1) // 2, (x0 + x1) // 2] == 1  # the detection is the block on the table


def test_pixels_behind_the_far_edge_are_marked_and_the_table_and_block_are_not() -> None:
    obs = render([BLOCK, *SHELF], K, T_WORLD_CAM, 640, 360, table_z=TABLE_Z)
    z = world_z_image(obs)
    table_z = support_z(obs)
    assert z is not None and table_z is not None and abs(table_z - TABLE_Z) < 0.002
    behind = behind_table(obs, z, table_z)
    assert obs.seg is not None
    for i in range(len(SHELF)):
        tile = obs.seg == i + 2
        assert behind[tile].mean() > 0.95
    assert not behind[obs.seg == 1].any()
    assert behind[(obs.seg == 0) & (obs.depth_m > 0)].mean() < 0.01  # the table itself


def test_a_wall_face_is_an_upright_sheet_and_the_thinnest_objects_are_not() -> None:
    rng = np.random.default_rng(0)
    wall = np.column_stack([rng.uniform(-0.3, 0.3, 500), np.full(500, 0.40), rng.uniform(0.74, 0.9, 500)])
    assert is_upright_sheet(wall)
    length_m, thickness_m = footprint_spread_m(wall)
    assert length_m > 0.5 and thickness_m < 1e-9
    # a marker lying down (1.2 cm thick) and a 2 cm die seen from above: footprints with an area
    marker = np.column_stack([rng.uniform(-0.06, 0.06, 300), rng.uniform(-0.006, 0.006, 300), np.full(300, 0.75)])
    die = np.column_stack([rng.uniform(-0.01, 0.01, 300), rng.uniform(-0.01, 0.01, 300), np.full(300, 0.76)])
    assert not is_upright_sheet(marker) and not is_upright_sheet(die)


def test_a_thin_coloured_panel_standing_behind_the_table_is_not_a_pale_object_either() -> None:
    panel = SynthBox("panel", (0.0, 0.40, TABLE_Z + 0.05), (0.2, 0.002, 0.1), "white")
    obs = render([panel], K, T_WORLD_CAM, 640, 360, table_z=TABLE_Z)
    assert obs.seg is not None and bool((obs.seg == 1).any())
    assert raised_regions(obs) == []


def test_a_block_whose_top_is_hidden_by_the_one_on_it_is_still_found() -> None:
    # in a stack the camera sees only the lower block's front face: an upright sheet, but not at the far edge
    red = SynthBox("red_block", (0.05, 0.0, TABLE_Z + 0.025), (0.05, 0.05, 0.05), "red")
    green = SynthBox("green_block", (0.05, -0.005, TABLE_Z + 0.075), (0.07, 0.07, 0.05), "green")
    obs = render([red, green], K, T_WORLD_CAM, 640, 360, table_z=TABLE_Z)
    assert obs.seg is not None and bool((obs.seg == 1).any())
    z = world_z_image(obs)
    assert z is not None
    face = obs.seg == 1
    assert float(np.ptp(z[face])) > 0.02  # its front face is in view, its top is not
    dets = make_detector("color").detect(obs, ["red block"])
    assert len(dets) == 1, [(d.label, d.box_xyxy) for d in dets]


def test_a_coloured_panel_just_behind_the_far_edge_is_a_wall_face() -> None:
    # within the behind-the-table margin (the table ends at y = 0.35): only the sheet test can drop it
    panel = SynthBox("panel", (0.0, 0.352, TABLE_Z + 0.05), (0.12, 0.002, 0.08), "green")
    obs = render([panel], K, T_WORLD_CAM, 640, 360, table_z=TABLE_Z)
    assert obs.seg is not None and bool((obs.seg == 1).any())
    z, table_z = world_z_image(obs), support_z(obs)
    assert z is not None and table_z is not None
    edge = far_edge(obs, z, table_z)
    assert edge is not None
    assert not behind_table(obs, z, table_z, edge)[obs.seg == 1].all()
    assert make_detector("color").detect(obs, ["green block"]) == []
    pts = points_world(obs.seg == 1, obs)
    assert is_wall_face(pts, edge)
    assert not is_wall_face(pts - np.array([0.0, 0.30, 0.0]), edge)  # the same sheet mid-table: an object's face


def test_a_block_standing_on_another_on_a_table_of_its_colour_is_measured_from_its_own_bottom() -> None:
    # the benchmark's randomised tables can be green: the table by the lower block's foot must not join the
    # upper block's mask and stretch it down to the table (the Reflector then saw no block on the other)
    red = SynthBox("red_block", (0.05, 0.0, TABLE_Z + 0.025), (0.05, 0.05, 0.05), "red")
    green = SynthBox("green_block", (0.05, 0.0, TABLE_Z + 0.075), (0.05, 0.05, 0.05), "green")
    obs = render([red, green], K, T_WORLD_CAM, 640, 360, table_z=TABLE_Z, table_rgb=(60, 140, 60))
    pipeline = make_perception("color")
    dets = pipeline.detect(obs, ["green block"])
    assert len(dets) == 1
    loc = pipeline.localize(obs, dets[0])
    bottom_m = loc.position_world[2] - loc.extent_m[2] / 2
    assert abs(bottom_m - (TABLE_Z + 0.05)) < 0.01, (loc.position_world, loc.extent_m)  # on the red block's top
    assert abs(loc.extent_m[2] - 0.05) < 0.01
