"""Contingencies in the simulator as the user meets them: reproducible episodes, faults in the trace as they
happen, a knocked-over block that can be picked up again, and a wrong-shaped action that moves nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mallvi.bench.task_scenes import scene_catalog
from mallvi.config import RunConfig
from mallvi.contracts.geometry import ArmSide
from mallvi.contracts.skills import FailureKind
from mallvi.orchestration.run_instruction import run
from mallvi.orchestration.stations import RunRequest
from mallvi.sim_bridge.world import SimWorld
from mallvi.tracing.trace import read_events


def _faults(trace: Path) -> list[tuple[str, str, str]]:
    events = read_events(trace)
    return [(e["fault"], e["skill"], e["detail"]["object"]) for e in events if e["kind"] == "fault_injected"]


def test_a_task_seed_level_episode_is_reproducible_and_its_faults_are_traced_as_they_happen(tmp_path: Path) -> None:
    cfg = RunConfig(perception="sim", contingency="grasp_miss=0.5,place_off=0.5")
    # seed 3: two faults act (seed 4's one fault was a place_off drawn for a place with no inverse-kinematics
    # solution, which moved nothing and is no longer recorded)
    a = run(RunRequest(task="stack_blocks_two", seed=3, trace_dir=tmp_path / "a"), cfg, catalog=scene_catalog())
    b = run(RunRequest(task="stack_blocks_two", seed=3, trace_dir=tmp_path / "b"), cfg, catalog=scene_catalog())
    fa, fb = _faults(tmp_path / "a"), _faults(tmp_path / "b")
    assert fa and fa == fb and a.faults_injected == len(fa)
    assert (a.success, a.status, a.attempts) == (b.success, b.status, b.attempts)
    events = list(read_events(tmp_path / "a"))
    kinds = [e["kind"] for e in events]
    first_fault = kinds.index("fault_injected")
    # written when it happened: between the Actor's commands, before the Reflector's verdict on that attempt
    assert "actor_command" in kinds[first_fault + 1:] or "verdict" in kinds[first_fault + 1:]
    assert kinds.index("run_end") > max(i for i, k in enumerate(kinds) if k == "fault_injected")
    # the Reflector saw each failed attempt and the run still judged by simulator truth
    verdicts = [e for e in events if e["kind"] == "verdict"]
    assert sum(v["verdict"] == "failure" for v in verdicts) == sum(a.attempts.values())


def test_a_place_that_moves_nothing_records_no_fault_and_one_that_puts_down_records_one() -> None:
    # before, a place_off was recorded when drawn: a place with no inverse-kinematics solution, and each of the
    # Actor's alternatives after it, showed an injected fault in the trace though nothing moved (4 at one moment)
    with SimWorld.create("stack_blocks_two", 0, render=False, contingency="place_off=1") as w:
        w.settle()
        assert w.skills.grasp_actor("green_block", "left").ok
        r = w.skills.place_actor("green_block", "left", [0.35, 0.40, w.table_top_z + 0.03])
        assert not r.ok and r.kind is FailureKind.UNREACHABLE, r.message
        r = w.skills.place_actor("green_block", "left", [0.55, 0.25, w.table_top_z + 0.03])
        assert not r.ok and r.kind is FailureKind.REFUSED_BY_GUARD, r.message
        assert w.injected_faults == []
        target = np.array([-0.27, 0.02])
        assert w.skills.place_actor("green_block", "left", [*target, w.table_top_z + 0.03]).ok
        w.settle()
        assert [f["kind"] for f in w.injected_faults] == ["place_off"]
        off_m = float(np.linalg.norm(w.objects["green_block"].pose.p[:2] - target))
        assert 0.035 < off_m < 0.085  # put down 4-8 cm from where it was asked


def test_a_block_knocked_off_a_stack_lands_on_the_table_and_can_be_grasped_again() -> None:
    with SimWorld.create("stack_blocks_two", 0, render=False, contingency="knock_over=1") as w:
        w.settle()
        red = w.objects["red_block"].pose.p.copy()
        arm: ArmSide = "left" if w.objects["green_block"].pose.p[0] < 0 else "right"
        assert w.skills.grasp_actor("green_block", arm).ok
        assert w.skills.place_actor("green_block", arm, [red[0], red[1], red[2] + 0.05]).ok  # reported as done
        w.settle()
        green = w.objects["green_block"].pose.p
        assert abs(green[2] - w.table_top_z) < 0.01  # not on the red block any more: on the table
        assert float(np.linalg.norm(green[:2] - red[:2])) > 0.04
        assert [f["kind"] for f in w.injected_faults] == ["knock_over"]
        again: ArmSide = "left" if green[0] < 0 else "right"
        assert w.skills.grasp_actor("green_block", again).ok, "a knocked-over cube is graspable from the top"


def test_a_bar_lying_on_the_pad_knocked_over_rolls_off_onto_the_table_not_through_it() -> None:
    import sapien
    from scipy.spatial.transform import Rotation

    from mallvi.sim_bridge.contingency import knock_over

    with SimWorld.create("handover_block", 1, render=False) as w:
        w.settle()
        bar = w.objects["red_block"]  # 0.06 x 0.06 x 0.20, frame origin at the bottom centre
        pad_xy = np.asarray(w.objects["blue_pad"].entity.get_pose().p[:2], dtype=float)
        for yaw_deg in (0, 90):
            for seed in range(4):
                R = Rotation.from_euler("z", yaw_deg, degrees=True) * Rotation.from_euler("x", 90, degrees=True)
                x, y, z, qw = R.as_quat()
                centre = [*pad_xy, w.table_top_z + 0.01 + 0.03]  # lying on the 1 cm pad
                bar.entity.set_pose(sapien.Pose(p=np.asarray(centre) - R.apply([0, 0, 0.1]), q=[qw, x, y, z]))
                w.settle(0.5)
                knock_over(bar, np.random.default_rng(seed))
                w.settle(1.0)
                p = bar.entity.get_pose()
                assert abs(p.to_transformation_matrix()[2, 2]) < 0.2, "a pushed bar lying down is not stood on end"
                assert float(p.p[2]) > w.table_top_z, f"yaw {yaw_deg}, seed {seed}: the bar fell through: {p.p}"
                assert float(np.linalg.norm(np.asarray(p.p[:2]) - pad_xy)) < 0.2


def test_a_cube_that_tumbled_onto_another_face_is_read_by_the_face_it_stands_on() -> None:
    import math

    import sapien

    with SimWorld.create("stack_blocks_two", 0, render=False) as w:
        w.settle()
        green = w.objects["green_block"]
        x, y = (float(v) for v in green.entity.get_pose().p[:2])
        half = green.size_m[2] / 2
        # rolled 90 degrees about x: the body's own z axis now lies horizontal
        q = [math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0]
        green.entity.set_pose(sapien.Pose(p=[x, y - half, w.table_top_z + half], q=q))
        w.settle()
        body_z_axis = green.entity.get_pose().to_transformation_matrix()[:3, 2]
        assert abs(body_z_axis[2]) < 0.1
        info = w.truth.get_object("green_block")
        assert abs(info.points["fp0"].position_m[2] - w.table_top_z) < 0.005, "fp0 is the face it stands on"
        assert abs(info.points["fp1"].position_m[2] - (w.table_top_z + 2 * half)) < 0.005
        approach = info.points["cp0"].as_matrix()[:3, 0]
        assert approach[2] < -0.99, "its top grasps point down again"
        arm: ArmSide = "left" if x < 0 else "right"
        assert w.skills.grasp_actor("green_block", arm).ok
        red = w.truth.get_object("red_block").points["fp1"].position_m
        assert w.skills.place_actor("green_block", arm, list(red), functional_point_id=0).ok
        w.settle()
        from mallvi.bench.tasks import get_task

        assert get_task("stack_blocks_two").check_success(w)


def test_a_block_pushed_out_of_the_gripper_is_not_pushed_into_its_neighbour() -> None:
    import sapien

    from mallvi.sim_bridge.contingency import push_out_of_grasp

    with SimWorld.create("stack_blocks_two", 0, render=False) as w:
        w.settle()
        green, red = w.objects["green_block"], w.objects["red_block"]
        green.entity.set_pose(sapien.Pose([-0.15, -0.05, w.table_top_z]))
        red.entity.set_pose(sapien.Pose([-0.15 + 0.08, -0.05, w.table_top_z]))  # 8 cm to the +x side
        w.settle()
        push_out_of_grasp(green, np.array([1.0, 0.0, 0.0]), gripper_half_width_m=0.03)
        w.settle()
        g, r = np.asarray(green.entity.get_pose().p), np.asarray(red.entity.get_pose().p)
        assert g[0] < -0.15 - 0.05, "pushed to the free side"
        assert abs(float(r[0]) - (-0.07)) < 0.005 and abs(float(g[2]) - w.table_top_z) < 0.005


def test_a_bar_lying_down_is_put_down_on_the_face_it_lies_on() -> None:
    import math

    import sapien

    with SimWorld.create("handover_block", 1, render=False) as w:
        w.settle()
        bar = w.objects["red_block"]  # 0.06 x 0.06 x 0.20
        lying = [math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0]  # its long axis along world -y
        bar.entity.set_pose(sapien.Pose(p=[-0.15, 0.0, w.table_top_z + 0.03], q=lying))
        w.settle()
        assert w.skills.grasp_actor("red_block", "left").ok
        target = [-0.12, -0.12, w.table_top_z]
        r = w.skills.place_actor("red_block", "left", target, functional_point_id=0, pre_dis=0.08, dis=0.005)
        assert r.ok, r.message
        w.settle()
        centre = w.truth.get_object("red_block").points["center"].position_m
        assert abs(centre[2] - (w.table_top_z + 0.03)) < 0.01, "still lying, on the table"
        assert np.hypot(centre[0] - target[0], centre[1] - target[1]) < 0.02


def test_a_block_pushed_out_of_the_gripper_towards_the_arm_pedestal_stays_on_the_table() -> None:
    import sapien

    from mallvi.sim_bridge.contingency import push_out_of_grasp

    with SimWorld.create("stack_blocks_two", 0, render=False) as w:
        w.settle()
        green = w.objects["green_block"]
        for start_xy, d in (((0.33, -0.20), (0.0, -1.0, 0.0)), ((0.26, -0.27), (1.0, 0.0, 0.0))):
            green.entity.set_pose(sapien.Pose([*start_xy, w.table_top_z]))
            w.settle()
            push_out_of_grasp(green, np.array(d), gripper_half_width_m=0.03)
            w.settle()
            p = np.asarray(green.entity.get_pose().p)
            assert abs(float(p[2]) - w.table_top_z) < 0.005, f"from {start_xy}: thrown off the table to {p}"
            assert float(np.linalg.norm(p[:2] - np.asarray(start_xy))) < 0.12


def test_a_15_number_end_effector_action_is_refused_and_nothing_moves() -> None:
    with SimWorld.create("stack_blocks_two", 0, render=False) as w:
        w.settle()
        ee_before = {s: np.asarray(w.arms[s].ee_pose().p).copy() for s in ("left", "right")}
        r = w.skills.execute_ee_action([0.1] * 15)
        assert not r.ok and "16" in r.message
        for s in ("left", "right"):
            assert np.allclose(np.asarray(w.arms[s].ee_pose().p), ee_before[s], atol=1e-4)


def test_a_block_at_the_front_edge_is_pushed_along_the_table_not_off_it() -> None:
    import sapien

    from mallvi.sim_bridge.contingency import push_out_of_grasp

    with SimWorld.create("stack_blocks_two", 0, render=False) as w:
        w.settle()
        green = w.objects["green_block"]
        green.entity.set_pose(sapien.Pose([0.0, -0.31, w.table_top_z]))  # 1.5 cm from the front edge (y = -0.35)
        w.settle()
        push_out_of_grasp(green, np.array([0.0, -1.0, 0.0]), gripper_half_width_m=0.03)
        w.settle()
        p = np.asarray(green.entity.get_pose().p)
        assert abs(float(p[2]) - w.table_top_z) < 0.005, f"pushed off the table to {p}"
        assert float(p[1]) > -0.31 + 0.06, "pushed out of the gripper the other way"


def test_a_block_pushed_out_of_the_gripper_on_a_stack_falls_onto_the_table() -> None:
    import sapien

    from mallvi.sim_bridge.contingency import push_out_of_grasp

    with SimWorld.create("stack_blocks_two", 0, render=False) as w:
        w.settle()
        green, red = w.objects["green_block"], w.objects["red_block"]
        red.entity.set_pose(sapien.Pose([0.1, -0.05, w.table_top_z]))
        green.entity.set_pose(sapien.Pose([0.1, -0.05, w.table_top_z + 0.05]))
        w.settle()
        push_out_of_grasp(green, np.array([1.0, 0.0, 0.0]), gripper_half_width_m=0.03)
        w.settle()
        p = np.asarray(green.entity.get_pose().p)
        assert abs(float(p[2]) - w.table_top_z) < 0.01 and abs(float(p[0]) - 0.1) > 0.05, f"still on the stack: {p}"


def test_a_flat_box_lying_on_its_widest_face_is_not_tipped_and_does_not_crash_the_skill() -> None:
    """The fries box lying on its 7 x 9.5 cm face has no face narrow enough to roll over: the knock leaves it
    (the fault then pushes it aside); drawing an edge among none raised "high <= 0" inside the skill."""
    import sapien
    from scipy.spatial.transform import Rotation

    from mallvi.sim_bridge.contingency import knock_over
    from mallvi.sim_bridge.objects import make_fries_box

    with SimWorld.create("stack_blocks_two", 0, render=False) as w:
        x, y = 0.0, -0.1
        R = Rotation.from_euler("x", 90, degrees=True)  # its 3 cm side now vertical
        qx, qy, qz, qw = R.as_quat()
        fries = make_fries_box(w.scene, "fries", sapien.Pose(p=[x, y + 0.015, w.table_top_z + 0.001],
                                                              q=[qw, qx, qy, qz]))
        w.settle(0.5)
        before = np.asarray(fries.entity.get_pose().p, dtype=float)
        for seed in range(3):
            assert knock_over(fries, np.random.default_rng(seed)) is False
        assert np.allclose(np.asarray(fries.entity.get_pose().p, dtype=float), before)


def test_a_knock_slides_a_wide_low_object_and_leaves_it_on_the_table() -> None:
    """A standing bowl (18 cm wide, 5.2 cm high) or burger is not tipped onto its rim, where it rolled off the
    table like a wheel; the knock fault pushes it aside instead. A bottle standing still tips."""
    import sapien

    from mallvi.sim_bridge.contingency import knock_over
    from mallvi.sim_bridge.objects import make_bottle, make_bowl, make_burger

    with SimWorld.create("stack_blocks_two", 0, render=False) as w:
        bowl = make_bowl(w.scene, "bowl", sapien.Pose(p=[0.0, -0.12, w.table_top_z + 0.001]))
        burger = make_burger(w.scene, "burger", sapien.Pose(p=[0.2, -0.12, w.table_top_z + 0.001]))
        bottle = make_bottle(w.scene, "bottle", sapien.Pose(p=[-0.2, -0.12, w.table_top_z + 0.001]))
        w.settle(0.5)
        for obj in (bowl, burger):
            before = np.asarray(obj.entity.get_pose().p, dtype=float)
            assert all(knock_over(obj, np.random.default_rng(seed)) is False for seed in range(4)), obj.name
            assert np.allclose(np.asarray(obj.entity.get_pose().p, dtype=float), before)
        assert knock_over(bottle, np.random.default_rng(0)) is True
        w.settle(1.0)
        up = bottle.entity.get_pose().to_transformation_matrix()[:3, 2]
        assert abs(float(up[2])) < 0.3, "the bottle lies on its side"
        assert float(bottle.entity.get_pose().p[2]) > w.table_top_z - 0.01


def test_a_slid_bowl_stops_short_of_what_it_would_run_into() -> None:
    """The knock's slide moves a lone bowl the drawn 6 cm; a bowl nested in another meets the lower bowl's wall at
    once and stays nested (teleported through the wall, both flew off the table)."""
    import sapien

    from mallvi.sim_bridge.contingency import slide_aside
    from mallvi.sim_bridge.objects import make_bowl

    with SimWorld.create("stack_blocks_two", 0, render=False) as w:
        z = w.table_top_z + 0.001
        lone = make_bowl(w.scene, "lone", sapien.Pose(p=[-0.15, 0.15, z]))
        lower = make_bowl(w.scene, "lower", sapien.Pose(p=[0.2, 0.15, z]))
        upper = make_bowl(w.scene, "upper", sapien.Pose(p=[0.2, 0.15, z + 0.02]))
        w.settle(1.0)
        nested_at = np.asarray(upper.entity.get_pose().p, dtype=float)
        assert slide_aside(lone, np.array([0.06, 0.0, 0.0])) == pytest.approx(0.06)
        assert slide_aside(upper, np.array([0.06, 0.0, 0.0])) < 0.01
        w.settle(1.0)
        for bowl in (lone, lower, upper):
            assert float(bowl.entity.get_pose().p[2]) > w.table_top_z - 0.01, f"{bowl.name} left the table"
        assert float(np.linalg.norm(np.asarray(upper.entity.get_pose().p, dtype=float)[:2] - nested_at[:2])) < 0.02


def test_a_bowl_pushed_out_of_the_gripper_does_not_sweep_into_a_nest_beside_its_path() -> None:
    """A nest of two bowls stands 8 cm to the side of a bowl's push, in front of it: the push's rays along both
    sides of the bowl meet the nest, so the bowl goes the free way and the nest stays on the table (along the
    centre line alone the bowl went 15 cm into the nest and both its bowls were thrown off the table)."""
    import sapien

    from mallvi.sim_bridge.contingency import push_out_of_grasp
    from mallvi.sim_bridge.objects import make_bowl

    with SimWorld.create("stack_blocks_two", 0, render=False) as w:
        z = w.table_top_z + 0.001
        pushed = make_bowl(w.scene, "pushed", sapien.Pose(p=[-0.22, 0.12, z]))
        lower = make_bowl(w.scene, "lower", sapien.Pose(p=[-0.14, -0.11, z]))
        upper = make_bowl(w.scene, "upper", sapien.Pose(p=[-0.14, -0.11, z + 0.02]))
        w.settle(1.0)
        nest_at = np.asarray(upper.entity.get_pose().p, dtype=float)
        push_out_of_grasp(pushed, np.array([0.0, -1.0, 0.0]), gripper_half_width_m=0.03)
        w.settle(1.0)
        for bowl in (pushed, lower, upper):
            assert float(bowl.entity.get_pose().p[2]) > w.table_top_z - 0.01, f"{bowl.name} left the table"
        assert float(np.linalg.norm(np.asarray(upper.entity.get_pose().p, dtype=float)[:2] - nest_at[:2])) < 0.02
        assert float(np.linalg.norm(np.asarray(pushed.entity.get_pose().p, dtype=float)[:2] - (-0.22, 0.12))) > 0.1


def test_a_burger_lying_on_the_tray_is_taken_again_only_by_a_grasp_stopping_short_of_its_point() -> None:
    """A fault left the burger on the tray away from where it was put: no grasp of it is reachable anywhere there
    (the fingertips would reach the tray's floor), and the Thinker's variant 1 cm short of the grasp point takes
    it with either arm."""
    import sapien

    from mallvi.bench.tasks import TASKS
    from mallvi.graph.backends.rules.thinker.thinker import RAISED_GRASP_M
    from mallvi.sim_bridge.contingency import _set_still

    with SimWorld.create(TASKS["place_burger_fries"]().scene_spec("none"), 1400002, render=False) as w:
        w.settle()
        burger, tray = w.objects["burger"], w.objects["tray"]
        spot = [float(tray.pose.p[0]) - 0.02, float(tray.pose.p[1]) + 0.02]
        _set_still(burger, sapien.Pose([*spot, float(burger.pose.p[2]) + 0.03], burger.pose.q))
        w.settle()
        assert float(burger.pose.p[2]) > w.table_top_z + 0.005, "the burger lies on the tray"
        for arm in ("left", "right"):
            plain = w.skills.grasp_actor("burger", arm)
            assert not plain.ok and "no reachable grasp" in plain.message
        on_tray_z = float(burger.pose.p[2])
        taken = w.skills.grasp_actor("burger", "left", grasp_dis=RAISED_GRASP_M)
        assert taken.ok, taken.message
        assert float(burger.pose.p[2]) > on_tray_z + 0.02, "the grasp lifted the burger off the tray"


def test_a_miss_in_a_mid_air_hand_over_falls_short_and_leaves_the_block_in_the_giving_hand() -> None:
    """The left hand holds the bar up in the middle; the right hand's grasp draws a ``grasp_miss``. The bar cannot
    be pushed out of the left hand: the right hand falls short, its fingers close on nothing and the skill says
    so, the bar stays where the left hand holds it, and the next try takes it (the push used to shift the held
    bar, which the left hand's hold pulled back between the right fingers: the miss was recorded, the grasp held)."""
    with SimWorld.create(scene_catalog().get("handover_block").spec, 1500000, render=False,
                         contingency="medium") as w:
        w.settle()
        assert w.faults is not None
        drawn: list[str | None] = []
        w.faults.draw = lambda skill: drawn.pop(0) if drawn else None  # type: ignore[method-assign]
        bar = "red_block"
        assert w.skills.grasp_actor(bar, "left", contact_point_id=8).ok
        assert w.skills.place_actor(bar, "left", [0.0, -0.05, w.table_top_z + 0.10, 1.0, 0.0, 0.0, 0.0],
                                    functional_point_id=0, pre_dis=0.0, dis=0.0, is_open=False, constrain="align").ok

        def in_left_hand() -> np.ndarray:
            return np.linalg.inv(w.arms["left"].ee_pose().as_matrix()) @ w.truth.get_object(bar).pose.as_matrix()

        before = in_left_hand()
        drawn.append("grasp_miss")
        r = w.skills.grasp_actor(bar, "right", pre_grasp_dis=0.08, contact_point_id=0)
        assert not r.ok and "closed on nothing" in r.message, r.message
        assert [f["kind"] for f in w.injected_faults] == ["grasp_miss"]
        assert w.skills.parts.holder.holder_of(bar) == "left"
        assert float(np.linalg.norm(in_left_hand()[:3, 3] - before[:3, 3])) < 0.003, "the bar moved in the left hand"
        assert w.skills.grasp_actor(bar, "right", pre_grasp_dis=0.08, contact_point_id=0).ok


def test_a_bottle_knocked_in_the_bin_is_not_tipped_into_its_walls() -> None:
    """A bottle standing in the middle of put_bottles_dustbin's bin, 20 x 30 cm and 8 cm deep, has no room to fall
    over on any side (it is 22 cm tall): the knock leaves it standing in the bin (the caller slides it a little).
    Tipped into the walls, the overlap flung it metres away (1400002 under medium faults: 17 m)."""
    import sapien

    from mallvi.bench.tasks.task_base import point
    from mallvi.sim_bridge.contingency import knock_over

    with SimWorld.create(scene_catalog().get("put_bottles_dustbin").spec, 1400002, render=False) as w:
        w.settle()
        floor = np.asarray(point(w, "dustbin", "center"), dtype=float)
        bottle = w.objects["bottle1"]
        upright = sapien.Pose(p=[float(floor[0]), float(floor[1]), float(floor[2]) + 0.002], q=[1.0, 0.0, 0.0, 0.0])
        for k in range(4):
            bottle.entity.set_pose(upright)
            w.settle(0.5)
            assert not knock_over(bottle, np.random.default_rng(k)), f"draw {k}: tipped into the bin's walls"
            w.settle(1.0)
            p = np.asarray(bottle.entity.get_pose().p, dtype=float)
            assert float(np.linalg.norm(p[:2] - floor[:2])) < 0.05 and p[2] > w.table_top_z, f"draw {k}: {p}"
        # on the open table, away from everything, it still falls over
        bottle.entity.set_pose(sapien.Pose(p=[0.0, -0.05, w.table_top_z + 0.002], q=[1.0, 0.0, 0.0, 0.0]))
        for i, (name, other) in enumerate(w.objects.items()):
            near_m = float(np.linalg.norm(np.asarray(other.entity.get_pose().p)[:2] - (0.0, -0.05)))
            if name != "bottle1" and near_m < 0.3:
                other.entity.set_pose(sapien.Pose(p=[0.0, 5.0 + i, 0.5]))  # cleared out of the way
        w.settle(0.5)
        assert knock_over(bottle, np.random.default_rng(0))
