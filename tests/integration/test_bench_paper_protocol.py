"""The paper protocol's pieces in the real simulator: the original's assistant info filled from our scenes, its
executor (freeze, refusals, leniency) and its skill semantics (a grasp that neither lifts nor checks, Tier 3
actions that leave an unreachable arm where it is and stop at the first successful physics step), and the scene
and success-check details the original has (absolute heights, kept layouts, yaws, ranges)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
import sapien

from mallvi.bench.actions import execute_action, execute_ee_action, make_action
from mallvi.bench.agents.expert import ExpertAgent
from mallvi.bench.agents.single_paper_info import GRIPPER_HEIGHT_M, assistant_info, episode_facts
from mallvi.bench.paper_actions import run_action
from mallvi.bench.tasks import get_task
from mallvi.bench.tasks.task_base import pos, row_conditions
from mallvi.sim_bridge.world import SimWorld
from mallvi.tracing.trace import TraceWriter

SEED = 1230000  # seeds of this file: 1230000-1230099


@contextmanager
def _world(task: str, seed: int = SEED) -> Iterator[SimWorld]:
    t = get_task(task)
    w = SimWorld.create(t.scene_spec("none"), seed, render=False, grasp_refusal_threshold_m=t.allocation_threshold_m)
    try:
        yield w
    finally:
        w.close()


def _info(task: str, seed: int = SEED) -> tuple[str, SimWorld]:
    t = get_task(task)
    w = SimWorld.create(t.scene_spec("none"), seed, render=False)
    return assistant_info(t, w, episode_facts(t, w)), w


def _xy_in(text: str, p: np.ndarray) -> bool:
    """Whether an object position's x and y appear in the text (as the info prints them: 5 digits or more)."""
    return f"{p[0]:.4f}"[:-1] in text and f"{p[1]:.4f}"[:-1] in text


def test_cross_ranking_and_tower_info_leave_the_assignment_to_the_model() -> None:
    text, w = _info("blocks_cross_shape")
    try:
        poses = re.findall(r"\[(-?[\d.]+), (-?[\d.]+), [\d.]+, 0, 1, 0, 0\]", text)
        assert [(float(x), float(y)) for x, y in poses] == [(-0.12, -0.15), (0.0, -0.27), (0.0, -0.15), (0.12, -0.15),
                                                            (0.0, -0.03)]  # fmt: skip
        assert "five target_pose for you to determine" in text and "target_pose of red_block" not in text
        assert not any(_xy_in(text, pos(w, n)) for n in w.objects)  # no block positions either
    finally:
        w.close()
    text, w = _info("blocks_ranking_size")
    try:
        assert "is the far left position" in text and "is the middle position" in text
        assert "If you are grasping the largest one, place it to the far left position." in text
        halves = [round(float(w.objects[n].size_m[0]) / 2, 6) for n in ("red_block", "green_block", "blue_block")]
        sizes = re.search(r"The size of red, green, blue blocks are \[([^\]]+)\]", text)
        assert sizes and [round(float(v), 6) for v in sizes.group(1).split(",")] == halves
        assert "red_block" in text and not re.search(r"red_block[^.]{0,40}\[-?0\.\d+, -?0\.\d+", text)
    finally:
        w.close()
    text, w = _info("blocks_tower")
    try:
        assert "is the center target pose for placing final block tower" in text
        assert re.search(r"Left one is \[-0\.15, -0\.1\d+, [\d.]+, 0, 1, 0, 0\] and right one is \[0\.15, ", text)
        assert "The size of red, yellow, green, blue blocks are {'red': 0.032, 'yellow': 0.024, 'blue': 0.028, " \
               "'green': 0.02}" in text  # fmt: skip
        red_top = w.objects["red_block"].point_world("fp1").p
        assert f"The functional point of red block is [{float(red_top[0])!r}, " in text
    finally:
        w.close()


def test_bowls_and_bottles_info_give_the_targets_parameters_and_handover_pose() -> None:
    text, w = _info("stack_bowls_three")
    w.close()
    assert "[0.0, -0.1, 0.76, 0, 0.707, 0.707, 0] is the ideal middle position and the target_pose of the first bowl" \
        in text  # fmt: skip
    assert "functional_point_id = 0, pre_dis=0.09, dis=0 and constrain='align'" in text
    assert "contact_point_id= 0(right arm) or 2(left arm)" in text
    text, w = _info("put_bottles_dustbin")
    try:
        assert "[0, 0.0, 0.88, 0, 1, 0, 0] is the ideal middle position for right arm to place and deliver" in text
        drop = w.objects["dustbin"].point_world("drop").p
        assert f"the pos of left dustbin is [{round(float(drop[0]), 3)}, " in text  # our bin, not the original's
        assert "[-0.35, -0.1, 0.93" not in text
    finally:
        w.close()


def test_tier3_info_has_the_arm_poses_grasp_quaternions_steps_and_our_gripper_height() -> None:
    t = get_task("stack_blocks_two")
    with _world("stack_blocks_two") as w:
        facts = episode_facts(t, w)
        text = assistant_info(t, w, facts)
        home = np.round(np.asarray(w.arms["left"].ee_pose().as_list()), 5)
        assert f"Now the left arm pose is {home}" in text and f"The initial arm pose of left arm is {home}" in text
        assert "When you try to grasp block1, you should set q or quat=[" in text
        assert "The main steps of this task: 1.move grippers above the object" in text
        assert f"its ideal pos of z is {w.table_top_z + 0.01}" in text
        assert f"the gripper's height is approximately {GRIPPER_HEIGHT_M:g}m" in text and "0.162" not in text
        assert w.skills.move_to_pose("left", [-0.2, -0.1, 1.0, 0.5, -0.5, 0.5, 0.5]).ok
        moved = assistant_info(t, w, facts)  # the current pose is read every turn, the initial one is kept
        assert "Now the left arm pose is [-0.2" in moved and f"The initial arm pose of left arm is {home}" in moved
        fingers = min(float(link.entity.find_component_by_type(
            sapien.physx.PhysxArticulationLinkComponent).get_global_aabb_fast()[0][2]) for link in
            w.arms["left"].finger_links)  # fmt: skip
        assert 1.0 - fingers == pytest.approx(GRIPPER_HEIGHT_M, abs=0.003)  # the height we state is our gripper's
    text, w = _info("grab_roller")
    w.close()
    assert "Now the position of left contact point is [" in text and "recommended to set q or orientation = [" in text
    assert "The ideal height(z) of roller is over 0.8m" in text


def test_the_paper_grasp_neither_lifts_nor_checks() -> None:
    with _world("place_object_basket") as w:
        task = get_task("place_object_basket")
        arm = "left" if pos(w, "toy")[0] > 0 else "right"
        z0 = float(pos(w, "basket")[2])
        r = execute_action(task, w, make_action("grasp_actor", actor="basket", arm_tag=arm,
                                                contact_point_id=0 if arm == "left" else 1), semantics="paper")
        assert r.ok, r.message
        assert abs(float(pos(w, "basket")[2]) - z0) < 0.005  # not lifted: the basket's 2 cm lift is still to do
        assert "basket lifted above its start" in {c.name for c in task.evaluate(w).failed}
    task = get_task("stack_blocks_two")
    for semantics in ("paper", "mallvi"):
        with _world("stack_blocks_two") as w:
            arm = "left" if pos(w, "red_block")[0] < 0 else "right"
            z0 = float(pos(w, "red_block")[2])
            r = execute_action(task, w, make_action("grasp_actor", actor="red_block", arm_tag=arm), semantics=semantics)
            assert r.ok and w.grasped_object(arm) == "red_block", r.message
            lift = float(pos(w, "red_block")[2]) - z0
            assert (lift < 0.005) if semantics == "paper" else (lift > 0.04)  # mallvi's grasp lifts 5 cm
        with _world("stack_blocks_two") as w:  # fingers left open: nothing is held
            arm = "left" if pos(w, "red_block")[0] < 0 else "right"
            r = execute_action(task, w, make_action("grasp_actor", actor="red_block", arm_tag=arm, gripper_pos=1.0),
                               semantics=semantics)  # fmt: skip
            assert w.grasped_object(arm) is None
            assert r.ok == (semantics == "paper"), r.message  # the original does not check; mallvi's grasp does


def test_a_place_far_from_the_box_is_refused_and_nothing_freezes() -> None:
    task = get_task("place_cans_plasticbox")
    with _world("place_cans_plasticbox") as w:
        far = {"action_name": "place_actor", "parameters": {"actor": "can_left", "arm_tag": "left",
                                                             "target_pose": "[-0.3, 0.1, 0.9]"}}  # fmt: skip
        out = run_action(task, w, far, frozen=False)
        assert out.reply == ("Target pose is too far from the functional points of the plastic box. You must be "
                             "wrong! Reconsider the functional points you should put the can. Replanning!!!")
        assert not out.froze and out.refused and out.results == ()
        spot = task.box_spots(w)[0]  # type: ignore[attr-defined]
        near = {"action_name": "place_actor", "parameters": {"actor": "object1", "arm_tag": "left",
                                                              "target_pose": spot[:3]}}  # fmt: skip
        out = run_action(task, w, near, frozen=False)  # passes the refusal; the skill then finds no can in hand
        assert out.reply == "Placing failed for left arm: the left arm does not hold can_left; grasp it first"


def test_unknown_keys_are_ignored_names_are_substrings_and_contact_lists_are_candidates() -> None:
    task = get_task("blocks_ranking_rgb")
    with _world("blocks_ranking_rgb") as w:
        action = {"action_id": "2.8", "action_name": "back_to_origin", "parameters": {"arm_tag": "Left", "speed": 3}}
        assert run_action(task, w, action, frozen=False).reply is True
        arm = "left" if pos(w, "blue_block")[0] < 0 else "right"
        grasp = {"action_name": "grasp_actor", "parameters": {"actor": "The BLUE one", "arm_tag": arm,
                                                               "contact_point_id": [2, 3], "note": "x"}}  # fmt: skip
        out = run_action(task, w, grasp, frozen=False)
        assert out.reply is True and out.results[0].data["grasp"].split("_")[0] in ("cp2", "cp3")
        typo = {"action_name": "place_actor", "parameters": {"actor": "blue", "arm_tag": arm, "function_point_id": 0,
                                                              "target_pose": [0, -0.13, 0.8, 0, 1, 0, 0]}}  # fmt: skip
        assert run_action(task, w, typo, frozen=False).reply == ("Wrong arg name: function_point_id. It may be "
                                                                  "functional_point_id. Replanning!!!")
        out = run_action(task, w, {"parameters": {"arm_tag": "left"}}, frozen=False)
        assert str(out.reply) == "('Error, please check the content: ', KeyError('action_name'))"


def test_a_failed_motion_plan_freezes_the_episode_as_the_originals_code() -> None:
    task = get_task("blocks_ranking_rgb")
    with _world("blocks_ranking_rgb") as w:
        no_ik = {"action_name": "move_to_pose",
                 "parameters": {"arm_tag": "left", "target_pose": [-0.35, 0.3, w.table_top_z + 0.05, 0, 1, 0, 0]}}
        out = run_action(task, w, no_ik, frozen=False)
        assert out.reply is True and out.froze and not out.results[0].ok  # told it succeeded; it did not
        q = w.arms["left"].joint_positions_rad().copy()
        arm = "left" if pos(w, "red_block")[0] < 0 else "right"
        grasp = {"action_name": "grasp_actor", "parameters": {"actor": "red_block", "arm_tag": arm}}
        out = run_action(task, w, grasp, frozen=True)
        assert out.reply is True and out.results == ()  # nothing runs in a frozen episode ...
        assert np.allclose(w.arms["left"].joint_positions_rad(), q)
        assert w.grasped_object(arm) is None
        bad = {"action_name": "grasp_actor", "parameters": {"actor": "pizza", "arm_tag": "left"}}
        assert str(run_action(task, w, bad, frozen=True).reply).startswith("Invalid actor: pizza.")  # ... checks do
        pose = run_action(task, w, {"action_name": "get_arm_pose", "parameters": {"arm_tag": "left"}}, frozen=True)
        assert pose.query and pose.feedback.startswith("Action failed: [") and len(pose.reply) == 7


def test_a_tier3_arm_that_cannot_reach_stays_and_the_action_counts() -> None:
    task = get_task("place_object_scale")
    with _world("place_object_scale") as w:
        left0 = w.arms["left"].ee_pose().as_list()
        right_goal = [0.25, -0.1, 1.0, 0.5, -0.5, 0.5, 0.5]
        action = [-0.35, 0.38, 0.76, 0.5, -0.5, 0.5, 0.5, 1.0, *right_goal, 0.0]  # left: far out of reach
        r = execute_ee_action(w, action, semantics="paper", task=task)
        assert r.ok and list(r.data["stayed"]) == ["left"]
        assert np.allclose(w.arms["left"].ee_pose().as_list()[:3], left0[:3], atol=0.005)
        assert np.allclose(w.arms["right"].ee_pose().as_list()[:3], right_goal[:3], atol=0.01)
        assert w.gripper_opening("right") < 0.2  # the gripper moved with the arm
        nan = [math.nan, *action[1:8], *right_goal, 1.0]
        r = execute_ee_action(w, nan, semantics="paper", task=task)
        assert r.ok and "left" in r.data["stayed"] and w.gripper_opening("right") > 0.8
        assert not execute_ee_action(w, action).ok  # mallvi's semantics refuse the whole action instead


@pytest.mark.slow
def test_tier3_success_is_checked_every_physics_step_and_stops_the_motion(tmp_path: object) -> None:
    task = get_task("grab_roller")
    with _world("grab_roller", SEED + 1) as w, TraceWriter(f"{tmp_path}/trace") as trace:
        stats = ExpertAgent(semantics="paper").run_episode(task, w, trace)
        assert task.check_success(w), stats.extra
        axis_z = float(pos(w, "roller")[2]) + w.objects["roller"].size_m[2] / 2
        assert 0.80 < axis_z < 0.805  # stopped as the axis passed 0.8 m, not at the end of the 0.10 m lift


def test_the_originals_absolute_heights_are_world_heights() -> None:
    checks = {"grab_roller": ("roller axis z (world)", 0.80), "handover_mic": ("microphone head z (world)", 0.92),
              "hanging_mug": ("handle z (world)", 0.85)}  # fmt: skip
    for name, (condition, limit) in checks.items():
        tops = []
        for seed in (SEED + 2, SEED + 3, SEED + 4):
            with _world(name, seed) as w:
                tops.append(w.table_top_z)
                limits = {c.name: c.limit for c in get_task(name).evaluate(w).conditions}
                assert limits[condition] == pytest.approx(limit)  # the same world height whatever the table's
        assert max(tops) - min(tops) > 0.002


def test_ranking_size_keeps_layouts_that_already_meet_the_goal() -> None:
    task = get_task("blocks_ranking_size")
    met = 0
    for seed in range(400):
        scene = sapien.Scene()
        contents = task.build_scene(scene, np.random.default_rng(seed), 0.74)

        class _W:
            objects = contents.objects

        met += all(c.held for c in row_conditions(_W(), ("red_block", "green_block", "blue_block"), 0.2, 0.08))  # type: ignore[arg-type]
    assert 1 <= met <= 40  # a few percent of draws (19 of these 400; the original: about 3.7 %)


def test_cross_shape_blocks_turn_and_the_basket_stands_where_the_originals_does() -> None:
    yaws = []
    for seed in range(SEED, SEED + 3):
        with _world("blocks_cross_shape", seed) as w:
            yaws += [abs(2 * math.atan2(float(o.pose.q[3]), float(o.pose.q[0]))) for o in w.objects.values()]
        with _world("place_object_basket", seed) as w:
            basket, toy = pos(w, "basket"), pos(w, "toy")
            assert abs(basket[0]) == pytest.approx(0.02, abs=1e-4) and -0.08 <= basket[1] <= -0.05
            assert np.sign(basket[0]) != np.sign(toy[0]) and 0.2 <= abs(toy[0]) <= 0.25
    assert max(yaws) > 0.2 and max(yaws) <= 0.75 + 1e-6
