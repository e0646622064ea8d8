"""A handover between the arms: the receiving gripper takes a block the other arm holds, then carries it alone."""

from __future__ import annotations

import math

import numpy as np

from mallvi.sim_bridge.layout import top_down_quat_wxyz
from mallvi.sim_bridge.world import SimWorld


def test_right_arm_takes_the_tall_block_from_the_left_arm() -> None:
    with SimWorld.create("handover_block", 100000, render=False) as w:
        w.settle()
        assert w.skills.grasp_actor("red_block", "left").ok
        r = w.skills.move_to_pose("left", [0.0, -0.08, 1.02, *top_down_quat_wxyz(math.pi)])
        assert r.ok, r.message
        r = w.skills.grasp_actor("red_block", "right")  # side grasps tilted down: the left gripper is on top
        assert r.ok, r.message
        assert r.data["handover_from"] == "left" and "tilt" in r.data["grasp"]
        assert w.grasped_object("right") == "red_block" and w.grasped_object("left") is None
        assert w.skills.open_gripper("left").ok
        assert w.skills.move_by_displacement("left", z=0.08).ok
        before = w.objects["red_block"].pose.p.copy()
        r = w.skills.move_by_displacement("right", x=0.04, z=0.05)
        assert r.ok, r.message
        moved = w.objects["red_block"].pose.p - before
        assert np.allclose(moved, [0.04, 0.0, 0.05], atol=0.01), moved
