"""The single agent reads actions as leniently as the original benchmark: names, kwargs, strings, arm case."""

from __future__ import annotations

import pytest

from mallvi.bench.agents.single_info import resolve_actor
from mallvi.bench.agents.single_parse import lenient_action
from mallvi.bench.cost import CostClock, cost_record, cost_totals

BLOCKS = ["blue_block", "green_block", "red_block"]


@pytest.mark.parametrize(
    ("task", "said", "objects", "meant"),
    [
        ("blocks_ranking_rgb", "red_block", BLOCKS, "red_block"),
        ("blocks_ranking_rgb", "Red Block", BLOCKS, "red_block"),
        ("blocks_ranking_rgb", "the green one", BLOCKS, "green_block"),
        ("blocks_ranking_rgb", "red-block", BLOCKS, "red_block"),
        ("place_burger_fries", "french fries", ["burger", "fries", "tray"], "fries"),
        ("place_burger_fries", "potato", ["burger", "fries", "tray"], "fries"),
        ("place_burger_fries", "object1", ["burger", "fries", "tray"], "burger"),
        ("place_cans_plasticbox", "left_can", ["can_left", "can_right", "plasticbox"], "can_left"),
        ("place_cans_plasticbox", "object2", ["can_left", "can_right", "plasticbox"], "can_right"),
        ("handover_block", "box", ["blue_pad", "red_block"], "red_block"),
        ("handover_mic", "mic", ["microphone"], "microphone"),
        ("put_bottles_dustbin", "bottle2", ["bottle1", "bottle2", "bottle3", "dustbin"], "bottle2"),
    ],
)
def test_object_names_the_original_accepts_resolve(task: str, said: str, objects: list[str], meant: str) -> None:
    assert resolve_actor(task, said, objects) == meant


@pytest.mark.parametrize("said", ["a block", "pizza", "the red or blue block"])
def test_unclear_names_stay_unresolved(said: str) -> None:
    assert resolve_actor("blocks_ranking_rgb", said, BLOCKS) is None


def test_kwargs_strings_and_case_are_read_as_the_original_reads_them() -> None:
    action = {
        "action_id": "2.3",
        "action_name": "Place_Actor",
        "parameters": {"actor": "Green Block", "arm_tag": " LEFT ", "target_pose": "[0.1, -0.1, 0.76, 1, 0, 0, 0]",
                       "constrain": "auto", "kwargs": {"constrain": "align", "pre_dis_axis": "fp"}},
    }  # fmt: skip
    out = lenient_action("blocks_ranking_rgb", action, BLOCKS)
    p = out["parameters"]
    assert out["action_name"] == "place_actor"
    assert p["actor"] == "green_block" and p["arm_tag"] == "left"
    assert p["target_pose"] == [0.1, -0.1, 0.76, 1, 0, 0, 0]
    assert p["constrain"] == "align" and p["pre_dis_axis"] == "fp" and "kwargs" not in p
    assert action["parameters"]["actor"] == "Green Block"  # the model's own action is left as it was


def test_a_name_that_means_nothing_is_left_for_the_executor_to_refuse() -> None:
    action = {"action_name": "grasp_actor", "parameters": {"actor": "pizza", "arm_tag": "left", "kwargs": 3}}
    p = lenient_action("blocks_ranking_rgb", action, BLOCKS)["parameters"]
    assert p["actor"] == "pizza" and p["kwargs"] == 3


def test_cost_clock_counts_nested_phases_once() -> None:
    clock = CostClock()
    with clock.phase("graph"), clock.phase("planning"), clock.phase("physics"):
        pass
    rec = cost_record(clock, wall_s=1.0, sim_s=5.0, cpu_s=0.5)
    inner = rec["graph_s"] + rec["planning_s"] + rec["physics_s"]
    assert 0.0 <= inner <= 1.0 and rec["other_s"] == pytest.approx(1.0 - inner, abs=1e-3)
    tot = cost_totals([{"cost": rec}, {"cost": rec}, {"status": "skipped"}])
    assert tot is not None and tot["episodes"] == 2
    assert tot["sim_per_wall"] == pytest.approx(5.0) and tot["episodes_per_core_minute"] == pytest.approx(120.0)
