"""Perception on SAPIEN renders: detection IoU against simulator masks, 3D centres and scene-graph relations."""

from __future__ import annotations

import numpy as np
import pytest

from mallvi.perception.detectors import make_detector
from mallvi.perception.evaluation import add_errors, match, truth_from_sim
from mallvi.perception.pipeline import make_perception
from mallvi.perception.scene_graph import PerceivedObject, SceneGraph

sim = pytest.importorskip("mallvi.sim_bridge.world")


def _centres(world) -> dict[str, tuple[float, float, float]]:  # type: ignore[no-untyped-def]
    return {n: world.truth.get_object(n).points["center"].position_m for n, o in world.objects.items()
            if o.label == "block"}


@pytest.mark.parametrize(("scene", "seed", "camera"), [
    ("stack_blocks_three", 100000, "head"), ("grounding_dense", 100001, "head"),
    ("grounding_sparse", 100002, "head"), ("grounding_cluttered", 100003, "head"),
    ("grounding_dense", 100004, "front"),  # third-person view: the floor around the table fills much of it
])
def test_color_and_sim_perception_find_every_block_and_its_centre(scene: str, seed: int, camera: str) -> None:
    with sim.SimWorld.create(scene, seed, cameras=(camera,)) as world:
        obs = world.observe(camera)
        truth = truth_from_sim(obs, _centres(world))
        assert all(t.mask_box is not None for t in truth)
        for mode in ("color", "sim"):
            perception = make_perception(mode)
            dets = perception.detect(obs, [])
            score = match(dets, truth, min_iou=0.5)
            assert score.missed == [], f"{mode} missed {score.missed}"
            low = {n: round(iou, 2) for n, (_, iou) in score.matches.items() if iou < 0.8}
            assert not low, f"{mode}: IoU below 0.8 for {low}"
            positions = {i: perception.localize(obs, dets[i]).position_world for i, _ in score.matches.values()}
            add_errors(score, positions, truth)
            far = {n: round(e * 1000, 1) for n, e in score.errors_m.items() if e > 0.005}
            assert not far, f"{mode}: centre errors over 5 mm: {far}"
        if scene != "grounding_cluttered":  # clutter objects are coloured objects too; blocks-only scenes have none
            assert len(make_detector("color").detect(obs, [])) == len(truth)


def _stack_and_row(scene, rng, table_top_z):  # type: ignore[no-untyped-def]
    from mallvi.sim_bridge.objects import make_block
    from mallvi.sim_bridge.randomization import table_pose
    from mallvi.sim_bridge.scene_spec import SceneContents

    x0, y0 = float(rng.uniform(-0.12, -0.05)), float(rng.uniform(-0.06, 0.0))
    h = 0.025
    objs = {
        "red_block": make_block(scene, "red_block", table_pose(x0, y0, table_top_z, 0.2), color="red"),
        "blue_block": make_block(scene, "blue_block", table_pose(x0 + 0.003, y0, table_top_z + 2 * h, 0.5),
                                 color="blue"),
        "green_block": make_block(scene, "green_block", table_pose(x0 + 0.13, y0, table_top_z, -0.3),
                                  color="green"),
        "yellow_block": make_block(scene, "yellow_block", table_pose(x0 - 0.01, y0 + 0.13, table_top_z),
                                   color="yellow"),
    }
    return SceneContents(objs, "look at the blocks")


@pytest.mark.parametrize("seed", [1, 2])
def test_scene_graph_relations_match_the_simulator(seed: int) -> None:
    from mallvi.sim_bridge.scene_spec import SceneSpec

    spec = SceneSpec("perception_stack_and_row", _stack_and_row)
    with sim.SimWorld.create(spec, seed) as world:
        world.settle(max_s=1.0)
        truth_graph = SceneGraph.build([
            PerceivedObject(n, "block", world.objects[n].color, "medium", c, world.objects[n].size_m, 1.0)
            for n, c in _centres(world).items()
        ])
        assert truth_graph.relation("blue_block", "red_block") == ["on"]
        obs = world.observe("head")
        for mode in ("color", "sim"):
            graph = make_perception(mode).describe(obs)
            assert sorted(o.id for o in graph.objects) == sorted(world.objects), mode
            for a in world.objects:
                for b in world.objects:
                    if a != b:
                        assert graph.relation(a, b) == truth_graph.relation(a, b), (mode, a, b)
            assert graph.relation("blue_block", "red_block") == ["on"]
            assert "right_of" in graph.relation("green_block", "red_block")
            assert "behind" in graph.relation("yellow_block", "red_block")
            assert "left_of" in graph.relation("red_block", "green_block")


def test_handover_scene_tall_block_and_flat_pad() -> None:
    with sim.SimWorld.create("handover_block", 100005) as world:
        obs = world.observe("head")
        graph = make_perception("color").describe(obs)
        assert sorted(o.id for o in graph.objects) == ["blue_pad", "red_block"]
        block, pad = graph.get("red_block"), graph.get("blue_pad")
        truth_block = world.truth.get_object("red_block").points["center"].position_m
        assert np.linalg.norm(np.asarray(block.position_world) - truth_block) < 0.005
        assert block.extent_m[2] == pytest.approx(world.objects["red_block"].size_m[2], abs=0.005)
        assert pad.extent_m[2] == pytest.approx(world.objects["blue_pad"].size_m[2], abs=0.004)
        assert pad.top_world is not None
        pad_top = world.truth.get_object("blue_pad").pose.position_m[2] + world.objects["blue_pad"].size_m[2]
        assert pad.top_world[2] == pytest.approx(pad_top, abs=0.003)


@pytest.mark.parametrize("xy", [(-0.243, -0.286), (0.187, -0.30)])
def test_a_coloured_block_partly_out_of_view_is_still_found_near_where_it_is(xy: tuple[float, float]) -> None:
    import sapien

    with sim.SimWorld.create("handover_block", 100005) as world:
        bar = world.objects["red_block"]  # 0.06 x 0.06 x 0.20, standing up
        bar.entity.set_pose(sapien.Pose([xy[0], xy[1], world.table_top_z]))
        world.settle()
        obs = world.observe("head")
        dets = make_perception("color").detect(obs, ["red block"])
        assert dets, "a block cut by the image's bottom edge is reported, not dropped"
        y1 = dets[0].box_xyxy[3]
        assert y1 >= obs.height - 1, "this arrangement does put the block across the edge"
        found = make_perception("color").localize(obs, dets[0]).position_world
        centre = world.truth.get_object("red_block").points["center"].position_m
        # the visible part's centre: close enough for the Actor to match it (3 cm) in the table plane
        assert np.linalg.norm(np.asarray(found[:2]) - np.asarray(centre[:2])) < 0.03
