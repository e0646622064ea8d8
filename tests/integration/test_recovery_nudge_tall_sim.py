"""A push beside handover_block's standing bar, in SAPIEN: the hand comes down clear of the bar and the push moves
it towards the arm's reach, on the table. Before, the palm came down on the bar's top edge and threw it off the
table (the run then ended with "object lost from view")."""

from __future__ import annotations

import numpy as np
import sapien

from mallvi.graph.backends.rules.thinker.pull import pulls
from mallvi.graph.backends.rules.thinker.strategies import nudge
from mallvi.graph.schemas import SceneMemory, SceneObject
from mallvi.sim_bridge.world import SimWorld
from tests.fixtures.sim_calls import bar_centre as _centre
from tests.fixtures.sim_calls import run_call as _call

LEFT_EDGE_XY_M = (-0.29, -0.07)  # where development seed 17002 left the bar standing before the push that lost it


def test_a_standing_bar_pushed_from_the_table_edge_stays_on_the_table_and_comes_into_reach() -> None:
    with SimWorld.create("handover_block", 10009, render=False) as w:
        w.settle()
        o = w.objects["red_block"]
        pose = o.entity.get_pose()
        c = _centre(w)
        o.entity.set_pose(sapien.Pose(p=[pose.p[0] + LEFT_EDGE_XY_M[0] - c[0], pose.p[1] + LEFT_EDGE_XY_M[1] - c[1],
                                         pose.p[2]], q=pose.q))
        w.settle(0.5)
        c = _centre(w)
        bar = SceneObject(id="red_block", label="block", color="red", position_m=[float(v) for v in c],
                          size_m=[0.06, 0.06, 0.20])
        plan = nudge("left", bar, SceneMemory(objects=[bar]), {"red_block": bar}, w.table_top_z, "left")
        for call in plan.calls[:3]:  # close, come over, come down beside it
            assert _call(w, call).ok
        assert np.linalg.norm(_centre(w) - c) < 0.005, "the descent touched the bar"
        for call in plan.calls[3:]:
            assert _call(w, call).ok
        after = _centre(w)
        assert after[2] > w.table_top_z, "the bar left the table"
        spot = np.array([-0.12, -0.05])  # the left arm's reach spot
        assert np.linalg.norm(after[:2] - spot) < np.linalg.norm(c[:2] - spot) - 0.04


def test_a_bar_standing_at_the_back_of_the_table_is_toppled_towards_the_robot() -> None:
    with SimWorld.create("handover_block", 10009, render=False) as w:
        w.settle()
        o = w.objects["red_block"]
        pose = o.entity.get_pose()
        c = _centre(w)
        o.entity.set_pose(sapien.Pose(p=[pose.p[0] + 0.18 - c[0], pose.p[1] + 0.22 - c[1], pose.p[2]], q=pose.q))
        w.settle(0.5)
        c = _centre(w)
        bar = SceneObject(id="red_block", label="block", color="red", position_m=[float(v) for v in c],
                          size_m=[0.06, 0.06, 0.20])
        plans = pulls(bar, w.table_top_z)
        assert [p.strategy for p in plans] == ["topple right"]
        for call in plans[0].calls:
            assert _call(w, call).ok, call
        w.settle(1.0)
        after = _centre(w)
        assert after[2] < w.table_top_z + 0.05, "the bar still stands"
        assert after[1] < c[1] - 0.05, "the bar did not come forward"
