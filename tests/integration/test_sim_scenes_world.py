"""Registered scenes through sim-core's SimWorld: objects rest on the world's table and the head camera's
segmentation names them."""

from __future__ import annotations

import numpy as np
import sapien

from mallvi.sim_bridge.world import SimWorld


def test_scene_in_simworld_settles_and_is_seen_by_the_head_camera() -> None:
    with SimWorld.create("grounding_dense", 100003, cameras=("head",)) as world:
        assert set(world.objects) == {"red_block", "yellow_block", "blue_block", "green_block", "black_block"}
        start = {n: o.pose.p.copy() for n, o in world.objects.items()}
        world.settle(max_s=1.0)
        for name, obj in world.objects.items():
            assert np.linalg.norm(obj.pose.p - start[name]) < 0.005, f"{name} moved while settling"
            assert abs(obj.pose.p[2] - world.table_top_z) < 0.003, f"{name} is not on the world's table"
        obs = world.observe("head")
        assert obs.seg is not None
        visible = {obs.seg_names[int(i)] for i in np.unique(obs.seg) if int(i) in obs.seg_names}
        assert visible == set(world.objects), f"head camera sees {visible}"
        info = world.truth.get_object("red_block")
        assert np.allclose(info.points["fp1"].p - info.points["fp0"].p, [0, 0, 0.05], atol=1e-3)


def test_simworld_scene_is_a_function_of_the_seed() -> None:
    def poses(seed: int) -> dict[str, list[float]]:
        with SimWorld.create("blocks_free", seed, render=False) as world:
            return {n: o.pose.p.tolist() for n, o in world.objects.items()}

    assert poses(100007) == poses(100007)
    assert poses(100007) != poses(100008)


def test_library_objects_can_be_picked_with_the_world_skills() -> None:
    from mallvi.sim_bridge.objects import make_bottle, make_bowl, make_can, make_mug
    from mallvi.sim_bridge.randomization import table_pose
    from mallvi.sim_bridge.scene_spec import SceneContents, SceneSpec

    def build(scene: sapien.Scene, rng: np.random.Generator, z: float) -> SceneContents:
        del rng
        objs = [
            make_can(scene, "can", table_pose(-0.18, -0.05, z)),
            make_bowl(scene, "bowl", table_pose(0.18, -0.05, z)),
            make_mug(scene, "mug", table_pose(-0.22, 0.07, z)),
            make_bottle(scene, "bottle", table_pose(0.22, 0.07, z)),
        ]
        return SceneContents({o.name: o for o in objs}, "", {})

    with SimWorld.create(SceneSpec("pick_probe", build), 1, render=False) as world:
        world.settle()
        for name, arm in (("can", "left"), ("bowl", "right"), ("mug", "left"), ("bottle", "right")):
            z0 = float(world.objects[name].pose.p[2])
            grasp = world.skills.grasp_actor(name, arm)
            assert grasp.ok, f"{name}: {grasp.message}"
            lift = world.skills.move_by_displacement(arm, z=0.05)
            assert lift.ok, f"{name}: {lift.message}"
            assert float(world.objects[name].pose.p[2]) - z0 > 0.04, f"{name} was not lifted with the gripper"
            assert world.skills.open_gripper(arm).ok
            world.settle()
