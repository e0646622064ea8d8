"""The simulated dual-arm world on this CPU: rendering, camera geometry, determinism and the skill API.

One world is shared by the module (building and first-rendering a world costs seconds).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest
import sapien

from mallvi.contracts.errors import DriverError
from mallvi.contracts.geometry import ARM_SIDES, ArmSide
from mallvi.contracts.skills import FailureKind
from mallvi.sim_bridge.layout import top_down_quat_wxyz
from mallvi.sim_bridge.objects import make_block
from mallvi.sim_bridge.randomization import table_pose
from mallvi.sim_bridge.scene_spec import SceneContents, SceneSpec
from mallvi.sim_bridge.world import SimWorld

CUBES = {  # name: (x, y) on the table; left arm's side is x < 0
    "red_block": (-0.25, 0.0),
    "green_block": (-0.30, -0.13),
    "blue_block": (0.25, 0.0),
    "yellow_block": (0.30, -0.13),
}


def _build(scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
    objects = {}
    for name, (x, y) in CUBES.items():
        jitter = rng.uniform(-0.01, 0.01, size=2)
        pose = table_pose(x + jitter[0], y + jitter[1], table_top_z, float(rng.uniform(-0.3, 0.3)))
        objects[name] = make_block(scene, name, pose, color=name.split("_")[0])
    return SceneContents(objects, "stack red on green and blue on yellow")


FOUR_CUBES = SceneSpec("test_four_cubes", _build, arm_spacing_m=0.7)


@pytest.fixture(scope="module")
def world() -> Iterator[SimWorld]:
    w = SimWorld.create(FOUR_CUBES, seed=7)
    w.settle()
    yield w
    w.close()


def _z(world: SimWorld, name: str) -> float:
    return float(world.objects[name].pose.p[2])


def test_fresh_world_renders_table_and_objects(world: SimWorld) -> None:
    obs = world.observe("head")
    assert obs.rgb.shape == (360, 640, 3) and obs.depth_m.shape == (360, 640) and obs.seg is not None
    front = world.observe("front")
    assert front.rgb.shape == (480, 640, 3)
    table_fraction = float(np.mean(obs.seg == world.table.per_scene_id))
    assert table_fraction > 0.25, "the head camera should look down at the table"
    for name in CUBES:
        mask = obs.mask_of(name)
        assert mask is not None and 30 < int(mask.sum()) < 5000, name
        # the cube's pixels carry its colour: the dominant channel matches the name
        mean_rgb = obs.rgb[mask].mean(axis=0)
        expected = {"red": 0, "green": 1, "blue": 2}.get(name.split("_")[0])
        if expected is not None:
            assert int(np.argmax(mean_rgb)) == expected, (name, mean_rgb)
    assert float(np.mean(obs.depth_m > 0)) > 0.95  # the room is closed: nearly every pixel hits something


def test_depth_K_and_pose_back_project_cube_top_centre_within_5mm(world: SimWorld) -> None:
    obs = world.observe("head")
    for name in ("red_block", "blue_block"):
        top_world = world.truth.get_object(name).points["fp1"].p
        T_cam_world = np.linalg.inv(obs.T_world_cam)
        p_cam = T_cam_world[:3, :3] @ top_world + T_cam_world[:3, 3]
        uvw = obs.K @ p_cam
        u, v = round(float(uvw[0] / uvw[2])), round(float(uvw[1] / uvw[2]))
        assert obs.seg is not None and obs.seg_names.get(int(obs.seg[v, u])) == name
        z = float(obs.depth_m[v, u])
        ray = np.linalg.inv(obs.K) @ np.array([u, v, 1.0])
        p_back = obs.T_world_cam[:3, :3] @ (ray * z) + obs.T_world_cam[:3, 3]
        # the pixel centre is up to half a pixel off the projected point: compare in the top face's plane
        assert abs(p_back[2] - top_world[2]) < 0.005
        assert np.linalg.norm(p_back[:2] - top_world[:2]) < 0.005, (name, p_back, top_world)


def test_same_seed_same_world_and_different_seed_differs() -> None:
    a = SimWorld.create(FOUR_CUBES, seed=11, render=False)
    b = SimWorld.create(FOUR_CUBES, seed=11, render=False)
    c = SimWorld.create(FOUR_CUBES, seed=12, render=False)
    try:
        assert a.table_top_z == b.table_top_z and 0.71 <= a.table_top_z <= 0.74
        for name in CUBES:
            assert np.allclose(a.objects[name].pose.p, b.objects[name].pose.p)
            assert np.allclose(a.objects[name].pose.q, b.objects[name].pose.q)
        assert a.table_top_z != c.table_top_z
        assert not np.allclose(a.objects["red_block"].pose.p, c.objects["red_block"].pose.p)
    finally:
        for w in (a, b, c):
            w.close()


def test_far_arm_grasp_is_refused_with_the_benchmark_message(world: SimWorld) -> None:
    before = world.arms["left"].joint_positions_rad()
    r = world.skills.grasp_actor("blue_block", "left")
    assert not r.ok
    expected = "target blue_block is too far, left arm can not finish this 'grasp' action! Please use another arm!"
    assert r.message == expected and r.kind == FailureKind.WRONG_ARM
    assert r.feedback.startswith("Action failed: target blue_block is too far")
    assert np.allclose(world.arms["left"].joint_positions_rad(), before)


def test_arm_driver_refuses_unsafe_joint_paths(world: SimWorld) -> None:
    arm = world.dual_arm.left
    q = arm.joint_positions_rad()
    jump = np.stack([q, q + np.array([1.2, 0, 0, 0, 0, 0])])
    with pytest.raises(DriverError, match="jumps"):
        arm.follow_joint_path(jump, 0.02)
    assert np.allclose(arm.joint_positions_rad(), q, atol=1e-4)
    small = np.linspace(q, q + np.array([0.05, 0, 0, 0, 0, 0]), 5)
    arm.follow_joint_path(small, 0.02)
    assert abs(arm.joint_positions_rad()[0] - (q[0] + 0.05)) < 0.005
    arm.follow_joint_path(small[::-1], 0.02)


def test_unknown_object_and_bad_arm_are_reported(world: SimWorld) -> None:
    r = world.skills.grasp_actor("purple_block", "left")
    assert not r.ok and "purple_block" in r.message and "red_block" in r.message
    assert r.kind == FailureKind.UNKNOWN_OBJECT
    r = world.skills.open_gripper("middle")  # type: ignore[arg-type]
    assert not r.ok and "left" in r.message and r.kind == FailureKind.BAD_PARAMETERS
    r = world.skills.grasp_actor("red_block", "left", contact_point_id=99)
    assert not r.ok and "no contact point 99" in r.message and "cp0" in r.message
    assert r.kind == FailureKind.BAD_PARAMETERS
    r = world.skills.grasp_actor("red_block", "left", contact_point_id="top")  # type: ignore[arg-type]
    assert not r.ok and "integer" in r.message and r.kind == FailureKind.BAD_PARAMETERS
    r = world.skills.place_actor("red_block", "left", [0.0, 0.0, 0.8])
    assert not r.ok and "does not hold red_block" in r.message and r.kind == FailureKind.NOT_HOLDING


def test_unreachable_and_nan_poses_are_reported_not_executed(world: SimWorld) -> None:
    arm = world.arms["right"]
    before = arm.ee_pose().p
    far = [0.3, 0.38, 1.0, *top_down_quat_wxyz(math.pi / 2)]  # 0.68 m in front of the base: out of reach
    r = world.skills.move_to_pose("right", far)
    assert not r.ok and "cannot move the right arm" in r.message and "inverse-kinematics" in r.message
    assert r.kind == FailureKind.UNREACHABLE
    r = world.skills.move_to_pose("right", [0.3, float("nan"), 1.0, 1, 0, 0, 0])
    assert not r.ok and "NaN" in r.message and r.kind == FailureKind.REFUSED_BY_GUARD
    r = world.skills.move_to_pose("right", [0.3, -0.1, 0.8, *top_down_quat_wxyz(0.0)])  # fingers into the table
    assert not r.ok and "below the table" in r.message and r.kind == FailureKind.REFUSED_BY_GUARD
    r = world.skills.execute_ee_action([0.0] * 15)
    assert not r.ok and "16" in r.message and r.kind == FailureKind.BAD_PARAMETERS
    assert np.allclose(arm.ee_pose().p, before, atol=1e-3)


def test_two_arm_pick_lift_and_stack(world: SimWorld) -> None:
    jobs: list[tuple[ArmSide, str, str]] = [
        ("left", "red_block", "green_block"),
        ("right", "blue_block", "yellow_block"),
    ]
    for side, obj, base in jobs:
        r = world.skills.grasp_actor(obj, side)
        assert r.ok, r.message
        assert world.grasped_object(side) == obj
        z0 = _z(world, obj)
        r = world.skills.move_by_displacement(side, z=0.1)
        assert r.ok, r.message
        assert abs(_z(world, obj) - z0 - 0.1) < 0.01
        target = world.truth.get_object(base).points["fp1"].position_m
        r = world.skills.place_actor(obj, side, list(target))
        assert r.ok, r.message
        assert world.grasped_object(side) is None and world.gripper_opening(side) > 0.8
    world.settle(1.5)
    for obj, base in (("red_block", "green_block"), ("blue_block", "yellow_block")):
        top, bottom = world.objects[obj].pose.p, world.objects[base].pose.p
        assert abs(top[2] - (bottom[2] + 0.05)) < 0.006, (obj, top, bottom)
        assert np.linalg.norm(top[:2] - bottom[:2]) < 0.02, (obj, top, bottom)
    for arm in ARM_SIDES:
        assert world.skills.back_to_origin(arm).ok


def test_closing_on_nothing_holds_nothing_and_16_dim_action_moves_both_arms(world: SimWorld) -> None:
    left, right = world.arms["left"].ee_pose(), world.arms["right"].ee_pose()
    shift = np.array([0.0, 0.05, -0.05])
    down = list(top_down_quat_wxyz(math.pi))
    clash = [0.0, -0.1, 1.0, *down, 1.0, 0.03, -0.1, 1.0, *down, 1.0]  # both grippers 3 cm apart
    r = world.skills.execute_ee_action(clash)
    assert not r.ok and "clearance" in r.message
    assert np.allclose(world.arms["left"].ee_pose().p, left.p, atol=1e-3)
    action = [*(left.p + shift), *left.q, 0.0, *(right.p + shift), *right.q, 1.0]
    r = world.skills.execute_ee_action(action)
    assert r.ok, r.message
    assert np.allclose(world.arms["left"].ee_pose().p, left.p + shift, atol=0.005)
    assert np.allclose(world.arms["right"].ee_pose().p, right.p + shift, atol=0.005)
    assert world.gripper_opening("left") < 0.2 and world.gripper_opening("right") > 0.8
    assert r.data["held"] == {"left": None, "right": None}
    assert world.arms["left"].finger_gap_m() < 0.003  # the fingers really closed
    held, why = world.holder.try_hold("left")
    assert held is None and why is not None and why.kind == FailureKind.GRASP_EMPTY and "closed on nothing" in str(why)
    r = world.skills.get_arm_pose("left")
    assert r.ok and np.allclose(r.data["pose"][:3], world.arms["left"].ee_pose().p, atol=1e-3)
    assert abs(float(np.linalg.norm(r.data["pose"][3:])) - 1.0) < 1e-3  # a unit quaternion [w, x, y, z]


def test_wrist_cameras_ride_on_the_grippers() -> None:
    with SimWorld.create(FOUR_CUBES, seed=7, cameras=(), wrist_cameras=True) as w:
        assert w.camera_names == ["left_wrist", "right_wrist"]
        before = w.camera("left_wrist").read()
        right_before = w.observe("right_wrist").T_world_cam
        assert before.rgb.shape == (180, 320, 3)
        assert w.skills.move_by_displacement("left", z=-0.05).ok
        after = w.camera("left_wrist").read()
        assert np.allclose(after.T_world_cam[:3, 3] - before.T_world_cam[:3, 3], [0, 0, -0.05], atol=0.003)
        assert np.allclose(w.observe("right_wrist").T_world_cam, right_before, atol=1e-3)  # the other arm stayed
        with pytest.raises(KeyError, match="no camera 'head'"):
            w.observe("head")


def test_planning_writes_nothing_to_the_terminal(capfd: pytest.CaptureFixture[str]) -> None:
    import logging

    with SimWorld.create("stack_blocks_two", 0, render=False) as w:  # OMPL would warn about seed 0
        w.settle()
        assert w.skills.grasp_actor("green_block", "left" if w.objects["green_block"].pose.p[0] < 0 else "right").ok
    out, err = capfd.readouterr()
    assert "seed cannot be 0" not in out + err
    assert out == "", f"the library printed: {out[:200]!r}"
    handlers = logging.getLogger("toppra").handlers
    assert not any(isinstance(h, logging.StreamHandler) for h in handlers), "no console handler behind our back"
