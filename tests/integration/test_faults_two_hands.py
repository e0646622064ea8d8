"""Faults of Tier 3 grasps on the roller (grab_roller's two-handed lift), the hands moved as the expert moves them.

Each hand's grasp draws one fault, when its fingers close on the roller; the actions after (the lift) draw none,
and fingers opened in between by ``open_gripper`` make the next closing a new grasp. A hand's miss or slip leaves
the roller held by the other hand or lying on the table, never up in the air between closed fingers with no hand
holding it (which no plan can recover from: it shows no grasp frame from above); a miss that cannot push the
roller clear of the fingers is not injected.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pytest

from mallvi.bench.agents.expert_ctx import ExpertContext, SolvedSignal
from mallvi.bench.agents.expert_fine import Hands, grab_roller
from mallvi.bench.episode import seed_global_rngs
from mallvi.bench.tasks import get_task
from mallvi.sim_bridge.world import SimWorld
from mallvi.tracing.trace import TraceWriter

NEVER = "grasp_miss=0.000001"  # faults are drawn (and counted) but none happens


def _roller_world(tmp_path: Path) -> tuple[SimWorld, Hands]:
    """grab_roller's scene of seed 1300000 with faults drawn but never happening, and hands to move in it."""
    task = get_task("grab_roller")
    seed_global_rngs(1300000)
    world = SimWorld.create(task.scene_spec(), 1300000, render=False, contingency=NEVER)
    return world, Hands(ExpertContext(task, world, TraceWriter(tmp_path / "trace"), budget=100))


def _record_draws(world: SimWorld) -> list[str | None]:
    """The faults the world draws from now on, of any skill, appended as they are drawn."""
    injector = world.faults
    assert injector is not None
    draws: list[str | None] = []
    drawn = injector.draw

    def draw(skill: str) -> str | None:
        draws.append(drawn(skill))
        return draws[-1]

    injector.draw = draw  # type: ignore[method-assign]
    return draws


def _lift_with_both_hands(seed: int, forced: list[str | None], tmp_path: Path,
                          lift_more: bool = True) -> tuple[SimWorld, list[str]]:
    """The expert's two-handed grasp and lift, then (``lift_more``) one more lift; the k-th grasp draw made
    ``forced[k]`` where given. Returns the world and the grasp draws made."""
    task = get_task("grab_roller")
    seed_global_rngs(seed)
    world = SimWorld.create(task.scene_spec(), seed, render=False, contingency=NEVER)
    injector = world.faults
    assert injector is not None
    draws: list[str] = []
    drawn = injector.draw

    def draw(skill: str) -> str | None:
        fault = drawn(skill)
        if skill == "grasp":
            k = len(draws)
            fault = forced[k] if k < len(forced) else fault
            draws.append(str(fault))
        return fault

    injector.draw = draw  # type: ignore[method-assign]
    ctx = ExpertContext(task, world, TraceWriter(tmp_path / f"trace-{seed}"), budget=100)
    with contextlib.suppress(SolvedSignal):
        grab_roller(ctx)
    if not lift_more:
        return world, draws
    hands = Hands(ExpertContext(task, world, TraceWriter(tmp_path / f"more-{seed}"), budget=100))
    hands.grip = {"left": 0.0, "right": 0.0}
    hands.shift("left", [0.0, 0.0, 0.03])
    hands.shift("right", [0.0, 0.0, 0.03])
    with contextlib.suppress(SolvedSignal):
        hands.send()
    return world, draws


def test_each_hand_draws_one_grasp_fault_for_the_whole_lift(tmp_path: Path) -> None:
    world, draws = _lift_with_both_hands(1300000, [], tmp_path)
    try:
        assert len(draws) == 2, f"grasp faults drawn: {draws} (one per hand expected)"
        bottom_m = float(world.objects["roller"].corners_world()[:, 2].min()) - world.table_top_z
        assert bottom_m > 0.05 and "roller" in (world.grasped_object("left"), world.grasped_object("right"))
    finally:
        world.close()


def test_a_hand_whose_hold_did_not_take_draws_no_fault_while_the_other_holds(tmp_path: Path) -> None:
    """Both hands close on the roller and only the right one's hold takes (as when the left fingers had not
    settled): the left hand does not take the roller over at the next actions, drawing a new fault each time."""
    world, hands = _roller_world(tmp_path)
    try:
        for back_m in (0.10, 0.0):
            hands.pose["left"] = hands.ee_for_grasp("roller", "cp0", back_m)
            hands.pose["right"] = hands.ee_for_grasp("roller", "cp1", back_m)
            assert hands.send()
        hands.grip = {"left": 0.0, "right": 0.0}
        assert hands.send()
        holder = world.skills.parts.holder
        assert holder.holder_of("roller") == "right"
        holder.release("left")  # nothing to release: the left hand never held it since the right took it over
        draws = _record_draws(world)
        for _ in range(2):
            hands.shift("left", [0.0, 0.0, 0.02])
            hands.shift("right", [0.0, 0.0, 0.02])
            with contextlib.suppress(SolvedSignal):
                assert hands.send()
        assert draws == [], f"faults drawn after the grasp: {draws}"
        assert holder.holder_of("roller") == "right"
    finally:
        world.close()


@pytest.mark.parametrize("seed", [1300000, 1300001])
@pytest.mark.parametrize("forced", [["grasp_miss"], [None, "grasp_miss"], ["grasp_slip"], [None, "grasp_slip"]])
@pytest.mark.parametrize("lift_more", [True, False])
def test_a_failing_hand_leaves_the_roller_held_or_on_the_table(seed: int, forced: list[str | None], lift_more: bool,
                                                                tmp_path: Path) -> None:
    """One hand misses or slips: the roller stays in the other hand's closed fingers, which hold it, or lies on the
    table. The other hand once took it only at a later action: where the slip's own action was the last (the arms
    went home next), the roller stayed up in the other hand, held by no hand."""
    world, draws = _lift_with_both_hands(seed, forced, tmp_path, lift_more)
    try:
        assert set(draws) & {"grasp_miss", "grasp_slip"}
        bottom_m = float(world.objects["roller"].corners_world()[:, 2].min()) - world.table_top_z
        holders = [s for s in ("left", "right") if world.grasped_object(s) == "roller"]
        assert holders or bottom_m < 0.01, f"the roller is {bottom_m:.3f} m up and no hand holds it"
        assert np.all(np.isfinite(world.objects["roller"].pose.p))
    finally:
        world.close()


def test_a_miss_with_no_room_to_push_the_roller_clear_is_not_injected(tmp_path: Path) -> None:
    """Cups stand against both ends of the roller: a miss cannot push it out along its axis. Cut short, the push
    left it between the closed fingers, held by no hand, and the lift carried it up all the same."""
    import sapien

    world, hands = _roller_world(tmp_path)
    try:
        roller = world.objects["roller"]
        T = roller.pose.to_transformation_matrix()
        axis, centre = T[:3, 0], np.asarray(roller.pose.p, dtype=float)
        for name, sense in (("clutter_0", 1.0), ("clutter_1", -1.0)):
            blocker = world.objects[name]
            at = centre + sense * (0.115 + 0.004 + max(blocker.size_m[:2]) / 2) * axis
            blocker.entity.set_pose(sapien.Pose(p=[float(at[0]), float(at[1]), world.table_top_z]))
        world.settle()
        injector = world.faults
        assert injector is not None
        drawn = injector.draw
        injector.draw = lambda skill: "grasp_miss" if skill == "grasp" else drawn(skill)  # type: ignore[method-assign]
        for back_m in (0.10, 0.0):
            hands.pose["left"] = hands.ee_for_grasp("roller", "cp0", back_m)
            assert hands.send()
        hands.grip["left"] = 0.0
        assert hands.send()
        hands.shift("left", [0.0, 0.0, 0.10])
        with contextlib.suppress(SolvedSignal):
            assert hands.send()
        bottom_m = float(roller.corners_world()[:, 2].min()) - world.table_top_z
        held = world.grasped_object("left")
        assert held == "roller" or bottom_m < 0.01, f"the roller is {bottom_m:.3f} m up, held by {held}"
        assert world.injected_faults == [] and held == "roller" and bottom_m > 0.05
    finally:
        world.close()


def test_a_hand_opened_by_another_skill_draws_a_new_fault_when_it_closes_again(tmp_path: Path) -> None:
    """The graph opens a gripper with ``open_gripper`` between end-effector actions: closing it on the roller
    again is a new grasp, with its own fault draw."""
    world, hands = _roller_world(tmp_path)
    try:
        draws = _record_draws(world)
        for back_m in (0.10, 0.0):
            hands.pose["left"] = hands.ee_for_grasp("roller", "cp0", back_m)
            assert hands.send()
        hands.grip["left"] = 0.0
        assert hands.send()
        assert world.grasped_object("left") == "roller" and len(draws) == 1
        assert world.skills.open_gripper("left").ok
        assert world.grasped_object("left") is None
        assert hands.send()  # the same pose, fingers closing again
        assert world.grasped_object("left") == "roller" and len(draws) == 2, f"grasp draws: {draws}"
    finally:
        world.close()
