"""back_to_origin where an object stands in the home pose's way: the left arm's home pose is right above the front
spot of put_bottles_dustbin's bin, where its fingers meet a bottle standing there. The arm parks clear above home
and says so, instead of planning towards a home it cannot reach until the planner's time runs out."""

from __future__ import annotations

import time

import numpy as np
import sapien

from mallvi.bench.task_scenes import scene_catalog
from mallvi.bench.tasks.task_base import point
from mallvi.sim_bridge.world import SimWorld


def test_an_arm_whose_home_is_taken_parks_above_it_and_says_so() -> None:
    with SimWorld.create(scene_catalog().get("put_bottles_dustbin").spec, 1500000, render=False) as w:
        w.settle()
        floor = point(w, "dustbin", "center")
        bottle = w.objects["bottle3"]
        # standing in the bin, 10 cm in front of its middle: under the left gripper's home pose
        bottle.entity.set_pose(sapien.Pose(p=[float(floor[0]), float(floor[1]) - 0.10, float(floor[2]) + 0.002],
                                           q=[1.0, 0.0, 0.0, 0.0]))
        w.settle()
        home_z = w.arms["left"].ee_pose().position_m[2]
        assert w.skills.move_by_displacement("left", x=0.12).ok
        before = np.asarray(w.truth.get_object("bottle3").pose.position_m)
        t0 = time.perf_counter()
        r = w.skills.back_to_origin("left")
        took_s = time.perf_counter() - t0
        assert r.ok, r.message
        assert "parked" in r.message and "above the home pose" in r.message and "bottle3" in r.message, r.message
        ee = w.arms["left"].ee_pose().position_m
        assert ee[2] > home_z + 0.03, "parked above home, not at it"
        w.settle()
        after = np.asarray(w.truth.get_object("bottle3").pose.position_m)
        assert float(np.linalg.norm(after - before)) < 0.005, "the bottle was not pushed"
        assert took_s < 10.0, f"took {took_s:.1f} s: the planner searched for a way into the bottle"


def test_an_arm_whose_home_is_free_goes_home() -> None:
    with SimWorld.create(scene_catalog().get("put_bottles_dustbin").spec, 1500000, render=False) as w:
        w.settle()
        home = w.arms["left"].joint_positions_rad().copy()
        assert w.skills.move_by_displacement("left", x=0.12).ok
        r = w.skills.back_to_origin("left")
        assert r.ok and r.message == "Action succeeded.", r.message
        assert float(np.max(np.abs(w.arms["left"].joint_positions_rad() - home))) < 0.02
