"""upright_actor in SAPIEN: a tall block that fell over is stood up again by a gravity swing in a loosened grip, and
put where the task wants it; a standing block is simply grasped; what cannot be done is reported."""

from __future__ import annotations

import math

import numpy as np
import sapien
from scipy.spatial.transform import Rotation

from mallvi.bench.tasks import get_task
from mallvi.bench.tasks.task_base import point
from mallvi.contracts.skills import FailureKind
from mallvi.sim_bridge.contingency import knock_over
from mallvi.sim_bridge.upright import tilt_deg
from mallvi.sim_bridge.world import SimWorld

BAR = "red_block"  # handover_block's 0.06 x 0.06 x 0.20 block; its frame's origin is its bottom centre


def _lay_bar(w: SimWorld, centre_xy: tuple[float, float], top_towards_xy: tuple[float, float]) -> None:
    """Put the bar lying on the table, its centre at ``centre_xy`` and its top end pointing along the direction."""
    heading = math.atan2(top_towards_xy[1], top_towards_xy[0])
    # Rx(90°) turns its z axis to -y; the yaw then turns -y to the heading
    R = Rotation.from_euler("z", heading + math.pi / 2) * Rotation.from_euler("x", 90, degrees=True)
    centre = np.array([*centre_xy, w.table_top_z + 0.03])
    x, y, z, qw = R.as_quat()
    w.objects[BAR].entity.set_pose(sapien.Pose(p=centre - R.apply([0.0, 0.0, 0.1]), q=[qw, x, y, z]))
    w.settle()


def test_a_bar_knocked_over_on_the_pad_is_stood_up_and_put_back_on_it() -> None:
    task = get_task("handover_block")
    for seed in (0, 1, 4):
        with SimWorld.create("handover_block", seed, render=False) as w:
            w.settle()
            top = point(w, "blue_pad", "fp1")
            bar = w.objects[BAR]
            bar.entity.set_pose(sapien.Pose(p=top + np.array([0.0, 0.0, 0.002]), q=bar.entity.get_pose().q))
            w.settle(0.5)
            knock_over(bar, np.random.default_rng(seed))
            w.settle()
            assert tilt_deg(w.truth.get_object(BAR).pose) > 80, "the set-up: the bar lies on its side"
            assert not task.check_success(w)
            r = w.skills.upright_actor(BAR, "right")
            assert r.ok, f"seed {seed}: {r.message}"
            assert "swung upright" in r.message and r.data["tilt_deg"] < 2.0
            assert w.holder.held_by("right") == BAR
            assert tilt_deg(w.truth.get_object(BAR).pose) < 2.0
            placed = w.skills.place_actor(BAR, "right", [*top, 1.0, 0.0, 0.0, 0.0], functional_point_id=0,
                                          pre_dis=0.08, dis=0.005, constrain="free")
            assert placed.ok, placed.message
            assert w.skills.back_to_origin("right").ok
            w.settle()
            assert task.check_success(w), f"seed {seed}: the benchmark's check fails after the stand-up"


def test_a_standing_bar_is_simply_grasped() -> None:
    with SimWorld.create("handover_block", 0, render=False) as w:
        w.settle()
        r = w.skills.upright_actor(BAR, "left")
        assert r.ok and r.data.get("already_upright") is True, r.message
        assert "already stands upright" in r.message and w.holder.held_by("left") == BAR


def test_a_bar_whose_top_end_lies_out_of_reach_is_laid_down_within_reach_first() -> None:
    with SimWorld.create("handover_block", 0, render=False) as w:
        w.settle()
        _lay_bar(w, (-0.33, -0.175), (-0.97, -0.25))  # top end towards the left pedestal, past the arm's base
        r = w.skills.upright_actor(BAR, "left")
        assert r.ok, r.message
        assert r.data.get("laid_down") is True and "laid red_block down within the left arm's reach" in r.message
        assert w.holder.held_by("left") == BAR and tilt_deg(w.truth.get_object(BAR).pose) < 2.0


def test_a_missed_grasp_of_a_lying_bar_closes_on_nothing_and_leaves_it_lying_on_the_table() -> None:
    with SimWorld.create("handover_block", 0, render=False, contingency="grasp_miss=1") as w:
        w.settle()
        _lay_bar(w, (0.12, -0.10), (1.0, 0.0))
        r = w.skills.upright_actor(BAR, "right")
        assert not r.ok and "closed on nothing" in r.message and r.kind == FailureKind.GRASP_EMPTY, r.message
        w.settle()
        centre = w.truth.get_object(BAR).points["center"].position_m
        assert abs(centre[2] - (w.table_top_z + 0.03)) < 0.01, f"still lying on the table: {centre}"
        assert [f["kind"] for f in w.injected_faults] == ["grasp_miss"]


def test_a_bar_standing_on_its_top_is_refused_and_nothing_moves() -> None:
    with SimWorld.create("handover_block", 0, render=False) as w:
        w.settle()
        bar = w.objects[BAR]
        p = np.asarray(bar.entity.get_pose().p, dtype=float)
        bar.entity.set_pose(sapien.Pose(p=p + np.array([0.0, 0.0, 0.2]), q=[0.0, 1.0, 0.0, 0.0]))  # upside down
        w.settle()
        ee = np.asarray(w.arms["left"].ee_pose().p).copy()
        r = w.skills.upright_actor(BAR, "left")
        assert not r.ok and "stands on its top" in r.message and r.kind == FailureKind.OBJECT_STATE
        assert np.allclose(np.asarray(w.arms["left"].ee_pose().p), ee, atol=1e-4)


def test_a_bar_that_slips_after_its_swing_is_not_caught_again_by_the_closing_fingers() -> None:
    with SimWorld.create("handover_block", 0, render=False, contingency="grasp_slip=1") as w:
        w.settle()
        _lay_bar(w, (0.12, -0.10), (1.0, 0.0))
        r = w.skills.upright_actor(BAR, "right")
        assert r.ok, "a slip is silent: the skill reports success"
        w.settle()
        assert w.holder.held_by("right") is None
        assert w.arms["right"].finger_gap_m() < 0.003, "the fingers closed on nothing, not on the bar's top"
        assert tilt_deg(w.truth.get_object(BAR).pose) < 10, "it dropped onto the table, standing"
        assert [f["kind"] for f in w.injected_faults] == ["grasp_slip"]


def test_going_home_from_around_a_standing_bar_leaves_it_standing_where_it_is() -> None:
    with SimWorld.create("handover_block", 0, render=False) as w:
        w.settle()
        assert w.skills.grasp_actor(BAR, "left").ok
        assert w.skills.move_by_displacement("left", z=-0.05).ok  # back down: the bar stands on the table again
        assert w.skills.open_gripper("left").ok  # the open fingers are around its top
        w.settle()
        before = w.truth.get_object(BAR).pose.as_matrix()
        assert w.skills.back_to_origin("left").ok
        w.settle()
        after = w.truth.get_object(BAR).pose.as_matrix()
        turned_deg = math.degrees(Rotation.from_matrix(before[:3, :3].T @ after[:3, :3]).magnitude())
        assert turned_deg < 2.0 and float(np.linalg.norm(after[:3, 3] - before[:3, 3])) < 0.005, "not dragged along"
