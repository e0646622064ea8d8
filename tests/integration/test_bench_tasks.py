"""Every registered ST-BiBench task: seeded reset, initial scene not solved, the arm-allocation refusal."""

from __future__ import annotations

import pytest

from mallvi.bench.actions import execute_action, make_action
from mallvi.bench.tasks import TASKS, get_task
from mallvi.bench.tasks.grounding import GroundingTask
from mallvi.bench.tiers import TIER_TASKS
from mallvi.sim_bridge.world import SimWorld


def _world(name: str, seed: int) -> SimWorld:
    task = get_task(name)
    return SimWorld.create(task.scene_spec(), seed, render=False, grasp_refusal_threshold_m=task.allocation_threshold_m)


def _layout(w: SimWorld) -> dict[str, list[float]]:
    return {n: [round(float(v), 6) for v in (*o.pose.p, *o.pose.q)] for n, o in sorted(w.objects.items())}


def test_registry_lists_every_tier_task_once_with_a_three_part_docstring() -> None:
    assert sorted(TASKS) == sorted(t for tasks in TIER_TASKS.values() for t in tasks)
    for name, cls in TASKS.items():
        assert cls.name == name and name in TIER_TASKS[cls.tier]
        doc = cls.__doc__ or ""
        for part in ("Task Description:", "Randomizations:", "Success Conditions:"):
            assert part in doc, f"{name} docstring lacks {part}"
        assert cls.max_turns >= 1


@pytest.mark.parametrize("name", sorted(TASKS))
def test_reset_is_a_pure_function_of_the_seed_and_the_initial_scene_is_not_solved(name: str) -> None:
    task = get_task(name)
    a, b, c = _world(name, 100000), _world(name, 100000), _world(name, 100001)
    try:
        assert _layout(a) == _layout(b)
        assert _layout(a) != _layout(c)
        assert not task.check_success(a) and not task.check_success(c)
        hints = task.hints(a)
        assert hints  # the planner's prompt facts exist for every task
        if isinstance(task, GroundingTask):
            truth = task.truth(a)
            assert truth and set(truth.values()) <= {"left", "right"}
            assert task.score(a, truth) == 100.0
    finally:
        for w in (a, b, c):
            w.close()


PLANNING_WITH_CHECK = [n for n in TIER_TASKS["planning"] if get_task(n).allocation_threshold_m is not None]


@pytest.mark.parametrize("name", PLANNING_WITH_CHECK)
def test_the_allocation_refusal_fires_for_the_wrong_arm(name: str) -> None:
    task = get_task(name)
    threshold = task.allocation_threshold_m
    assert threshold is not None
    for seed in range(100000, 100010):
        w = _world(name, seed)
        far = [(n, float(o.pose.p[0])) for n, o in w.objects.items() if abs(float(o.pose.p[0])) > threshold]
        if far:
            break
        w.close()
    else:
        pytest.fail(f"no object beyond ±{threshold} m in ten seeds of {name}")
    try:
        obj, x = far[0]
        wrong = "left" if x > 0 else "right"
        before = _layout(w)
        result = execute_action(task, w, make_action("grasp_actor", actor=obj, arm_tag=wrong))
        assert not result.ok and result.data.get("refused")
        assert result.message == (
            f"target {obj} is too far, {wrong} arm can not finish this 'grasp' action! Please use another arm!"
        )
        assert _layout(w) == before  # nothing moved
        assert task.allocation_refusal(w, obj, "right" if wrong == "left" else "left") is None
    finally:
        w.close()


@pytest.mark.parametrize("name", [n for n in TIER_TASKS["planning"] if get_task(n).allocation_threshold_m is None])
def test_tasks_without_the_check_let_either_arm_try(name: str) -> None:
    task = get_task(name)
    w = _world(name, 100000)
    try:
        for obj in w.objects:
            assert task.allocation_refusal(w, obj, "left") is None
            assert task.allocation_refusal(w, obj, "right") is None
    finally:
        w.close()


def test_malformed_actions_fail_with_a_reason_and_move_nothing() -> None:
    task = get_task("stack_blocks_three")
    w = _world("stack_blocks_three", 100000)
    try:
        before = _layout(w)
        cases = {
            "no such action": {"action_id": "9.9", "parameters": {}},
            "bad arm": make_action("back_to_origin", arm_tag="middle"),
            "unknown param": make_action("open_gripper", arm_tag="left", speed=3),
            "NaN": make_action("move_by_displacement", arm_tag="left", z=float("nan")),
            "short pose": make_action("move_to_pose", arm_tag="left", target_pose=[0.1, 0.2]),
            "unknown object": make_action("grasp_actor", actor="purple_block", arm_tag="left"),
            "not a dict": "grasp everything",
        }
        for label, action in cases.items():
            r = execute_action(task, w, action)
            assert not r.ok and r.message, label
        assert _layout(w) == before
    finally:
        w.close()


def test_bench_scenes_reach_runs_through_the_catalogue_and_leave_the_shared_registry_alone() -> None:
    from mallvi.bench.task_scenes import scene_catalog
    from mallvi.sim_bridge.scenes import scene_names

    before = scene_names()
    catalog = scene_catalog()
    assert scene_names() == before and "place_cans_plasticbox" not in before
    entry = catalog.get("place_cans_plasticbox")
    assert entry.spec.arm_spacing_m == 0.7 and "planning" in entry.spec.tags and entry.success is not None
    assert catalog.get("blocks_free").success is None  # a built-in scene without a benchmark task
    w = SimWorld.create(catalog.get("hanging_mug").spec, 100000, render=False)
    try:
        assert {"mug", "rack"} <= set(w.objects)
    finally:
        w.close()
