"""Fault injection: each fault kind acts physically and shows in the world's truth, reported or not as specified."""

from __future__ import annotations

import numpy as np
import pytest
import sapien

from mallvi.sim_bridge.contingency_profile import ContingencySpecError
from mallvi.sim_bridge.objects import make_block
from mallvi.sim_bridge.randomization import table_pose
from mallvi.sim_bridge.scene_spec import SceneContents, SceneSpec
from mallvi.sim_bridge.world import SimWorld


def _build(scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
    objs = {"red_block": make_block(scene, "red_block", table_pose(-0.25, -0.02, table_top_z, 0.2), color="red")}
    return SceneContents(objs, "pick up the red block")


ONE_CUBE = SceneSpec("test_one_cube", _build, arm_spacing_m=0.7)
TARGET = [-0.22, -0.14]


def _world(level: str) -> SimWorld:
    w = SimWorld.create(ONE_CUBE, seed=3, render=False, contingency=level)
    w.settle()
    return w


def test_grasp_miss_is_reported_and_the_block_stays_on_the_table() -> None:
    with _world("grasp_miss=1") as w:
        r = w.skills.grasp_actor("red_block", "left")
        assert not r.ok and "closed on nothing" in r.message
        assert w.grasped_object("left") is None
        assert w.objects["red_block"].pose.p[2] < w.table_top_z + 0.01
        assert [f["kind"] for f in w.injected_faults] == ["grasp_miss"]


def test_grasp_slip_reports_success_but_the_block_falls() -> None:
    with _world("grasp_slip=1") as w:
        r = w.skills.grasp_actor("red_block", "left")
        assert r.ok
        w.settle()
        assert w.grasped_object("left") is None
        assert w.objects["red_block"].pose.p[2] < w.table_top_z + 0.01
        assert w.gripper_opening("left") < 0.2  # the gripper still believes it is closed


def test_place_off_lands_4_to_8_cm_from_the_target() -> None:
    with _world("place_off=1") as w:
        assert w.skills.grasp_actor("red_block", "left").ok
        r = w.skills.place_actor("red_block", "left", [*TARGET, w.table_top_z])
        assert r.ok, r.message
        w.settle()
        miss = float(np.linalg.norm(w.objects["red_block"].pose.p[:2] - np.array(TARGET)))
        assert 0.03 < miss < 0.09, miss
        assert [f["kind"] for f in w.injected_faults] == ["place_off"]


def test_knock_over_tips_the_block_after_a_successful_place() -> None:
    with _world("knock_over=1") as w:
        assert w.skills.grasp_actor("red_block", "left").ok
        assert w.skills.place_actor("red_block", "left", [*TARGET, w.table_top_z]).ok
        w.settle()
        # tipped over a bottom edge: the 5 cm cube now lies about 5 cm from where it was put, still on the table
        moved = float(np.linalg.norm(w.objects["red_block"].pose.p[:2] - np.array(TARGET)))
        assert 0.035 < moved < 0.07, moved
        assert abs(w.objects["red_block"].pose.p[2] - w.table_top_z) < 0.01
        assert [f["kind"] for f in w.injected_faults] == ["knock_over"]


def test_no_faults_without_contingency_and_bad_levels_are_refused() -> None:
    with _world("none") as w:
        assert w.faults is None and w.injected_faults == []
    with pytest.raises(ContingencySpecError):
        SimWorld.create(ONE_CUBE, seed=3, render=False, contingency="very hard")
