"""upright_actor on a bottle knocked onto its side that is wider than the open gripper across its body (8.3 cm;
the gripper opens 8 cm): what counts is its width where the fingers close, its 3.2 cm neck near the top end, so it
is swung upright by the neck and set down standing where the graph sets it down."""

from __future__ import annotations

import numpy as np

from mallvi.bench.tasks import get_task
from mallvi.sim_bridge.contingency import knock_over
from mallvi.sim_bridge.grasp_width import width_across_m
from mallvi.sim_bridge.upright import tilt_deg
from mallvi.sim_bridge.world import SimWorld
from tests.fixtures.sim_calls import set_down

NEAR_ROBOT = (0.0, -0.13)  # the graph's relay spot, where a stood-up bottle is set down from 3 cm


def test_a_bottle_is_as_wide_as_its_part_between_the_fingers() -> None:
    with SimWorld.create(get_task("put_bottles_dustbin").scene_spec(), 1400000, render=False) as w:
        w.settle()
        bottle = w.objects["bottle1"]
        T = bottle.pose.to_transformation_matrix()
        height = float(bottle.size_m[2])
        across = T[:3, 0]

        def at(frac: float) -> float | None:
            return width_across_m(bottle, T[:3, 3] + T[:3, 2] * frac * height, across)

        assert at(0.45) is not None and abs(at(0.45) - bottle.size_m[0]) < 1e-3  # type: ignore[operator]
        assert at(0.9) is not None and abs(at(0.9) - 0.032) < 1e-3  # type: ignore[operator]
        assert width_across_m(bottle, T[:3, 3] + np.array([0.2, 0.0, 0.1]), np.array([0.0, 1.0, 0.0])) == 0.0
        assert np.allclose(bottle.pose.p, T[:3, 3])  # put back where it was


def test_a_bottle_wider_than_the_gripper_is_stood_up_by_its_neck_and_set_down_standing() -> None:
    with SimWorld.create(get_task("put_bottles_dustbin").scene_spec(), 1400000, render=False) as w:
        w.settle()
        assert knock_over(w.objects["bottle1"], np.random.default_rng(1400000))
        w.settle()
        assert w.objects["bottle1"].size_m[0] > 2 * w.embodiment.finger_travel_m, "the set-up: wider than the opening"
        assert tilt_deg(w.truth.get_object("bottle1").pose) > 80, "the set-up: it lies on its side"
        r = w.skills.upright_actor("bottle1", "left")
        assert r.ok, r.message
        assert w.holder.held_by("left") == "bottle1" and tilt_deg(w.truth.get_object("bottle1").pose) < 2.0
        placed, pose = set_down(w, "bottle1", "left", NEAR_ROBOT, pre_dis=0.03)
        assert placed.ok, placed.message
        assert tilt_deg(pose) < 2.0, f"the bottle stands {tilt_deg(pose):.0f}° off upright"
        assert np.hypot(pose.position_m[0] - NEAR_ROBOT[0], pose.position_m[1] - NEAR_ROBOT[1]) < 0.02
