"""upright_actor on a mug knocked onto its side: its body (8 cm) fills the open gripper (8 cm), so it is pinched
by its rim and swung upright, then set down standing; where no arm reaches a pinch it is reported, and the mug is
not taken across its body (where it stayed between the open fingers)."""

from __future__ import annotations

import numpy as np

from mallvi.bench.tasks import get_task
from mallvi.contracts.skills import FailureKind
from mallvi.sim_bridge.contingency import knock_over
from mallvi.sim_bridge.upright import tilt_deg
from mallvi.sim_bridge.world import SimWorld
from tests.fixtures.sim_calls import set_down

MIDDLE = (0.0, -0.05)


def _knocked_over(seed: int) -> SimWorld:
    w = SimWorld.create(get_task("hanging_mug").scene_spec(), seed, render=False)
    w.settle()
    assert knock_over(w.objects["mug"], np.random.default_rng(seed))
    w.settle()
    assert tilt_deg(w.truth.get_object("mug").pose) > 80, "the set-up: the mug lies on its side"
    return w


def test_a_mug_on_its_side_is_stood_up_by_its_rim_and_set_down_standing() -> None:
    for seed in (1410002, 1410005):
        with _knocked_over(seed) as w:
            r = w.skills.upright_actor("mug", "left")
            assert r.ok, f"seed {seed}: {r.message}"
            assert "swung upright" in r.message and str(r.data["grasp"]).startswith("rim_side")
            assert w.holder.held_by("left") == "mug" and tilt_deg(w.truth.get_object("mug").pose) < 2.0
            placed, pose = set_down(w, "mug", "left", MIDDLE, pre_dis=0.08)
            assert placed.ok, placed.message
            assert tilt_deg(pose) < 2.0, f"seed {seed}: the mug stands {tilt_deg(pose):.0f}° off upright"
            assert np.hypot(pose.position_m[0] - MIDDLE[0], pose.position_m[1] - MIDDLE[1]) < 0.02


def test_a_mug_whose_opening_faces_away_is_reported_not_taken_across_its_body() -> None:
    with _knocked_over(1410000) as w:  # its opening faces the back of the table: no pinch is reachable
        r = w.skills.upright_actor("mug", "left")
        assert not r.ok and r.kind == FailureKind.UNREACHABLE and "no reachable grasp of mug" in r.message
        assert w.holder.held_by("left") is None
        assert tilt_deg(w.truth.get_object("mug").pose) > 80
