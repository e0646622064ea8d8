"""How the paper protocol reads a model's Tier 3 actions and how the original's prompt text is assembled (no
simulator needed)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from mallvi.bench.agents.agent_protocols import TurnRecord
from mallvi.bench.agents.single_paper_prompt import EMPTY_FEEDBACK, example_image_name, packaged_example, turn_text
from mallvi.bench.arith import evaluate
from mallvi.bench.fidelity import TASKS as FIDELITY_TASKS
from mallvi.bench.fidelity import markdown_table
from mallvi.bench.loop_paper import chunk_of
from mallvi.bench.paper_actions import parse_ee_item
from mallvi.bench.tasks import TASKS, get_task
from mallvi.bench.tiers import PLANNING_TASKS

ROW = "[-0.25, -0.09, 0.98, 0.5, -0.5, 0.5, 0.5, 1.0, 0.22, -0.083, 0.98, 0.5, -0.5, 0.5, 0.5, 1.0]"


def test_arithmetic_in_a_tier3_action_is_computed_without_running_code() -> None:
    assert evaluate("0.738+0.13") == pytest.approx(0.868)
    assert evaluate(" (1 - 0.05) * 2 ") == pytest.approx(1.9)
    assert evaluate("-0.5") == -0.5
    for hostile in ("__import__('os').system('true')", "().__class__", "open('x')", "1e9**1e9", "1/0", "abc"):
        assert math.isnan(evaluate(hostile)), hostile


def test_a_tier3_action_may_be_text_a_list_of_text_or_hold_arithmetic() -> None:
    values, error = parse_ee_item(ROW)  # the original's example writes each action as a JSON string
    assert error is None and values is not None and values[2] == 0.98 and len(values) == 16
    with_sums = ROW.replace("0.98", "0.75+0.23", 1)  # not a Python literal: split at commas, each part computed
    values, error = parse_ee_item(with_sums)
    assert error is None and values is not None and values[2] == pytest.approx(0.98)
    values, error = parse_ee_item(["0.1*2", *([0.5] * 15)])
    assert error is None and values is not None and values[0] == pytest.approx(0.2)
    values, error = parse_ee_item(["x+1", *([0.5] * 15)])  # not arithmetic: NaN, that arm will stay
    assert error is None and values is not None and math.isnan(values[0])
    assert parse_ee_item([0.1] * 15) == (None, "Invalid action length: 15. Must be a list or tuple of 16 numbers.")
    values, error = parse_ee_item([[0.1], *([0.5] * 15)])
    assert values is None and error is not None and error.startswith("Error when parsing action: ")


def test_the_chunk_cut_is_the_originals() -> None:
    plan = [{"a": i} for i in range(9)]
    assert chunk_of(plan, 6) == plan[:6]
    assert chunk_of("[{...}]", 3) == "[{."  # a plan written as text is cut, then read character by character
    assert chunk_of({}, 6) == {} and chunk_of({"action_name": "x"}, 6) == {"action_name": "x"}


def test_tier2_first_turn_states_the_task_and_later_turns_the_history_never_the_chunk() -> None:
    info = "INFO"
    first = turn_text("blocks_ranking_rgb", "planning", [], info)
    assert first.startswith("\nThe task name is blocks_ranking_rgb, the description and the goal of the task is as "
                            "follows:\n<Place> the red block, green block, and blue block <in the order> of red, "
                            "green, and blue from left to right, <placing in a row>.\nYou are a robot")
    assert "\n!!!!! Assistant info (Very Important to provide some key info): INFO\n" in first
    assert "The output json format should be {'visual_state_description':str" in first
    assert '"action_id": "2.2"' in first and first.endswith("}\n\n")
    assert "The 3-steps action history" not in first and "first 10 actions" not in first.lower()
    history = [TurnRecord([], [EMPTY_FEEDBACK], index=i, listed="{}") for i in range(4)]
    later = turn_text("blocks_ranking_rgb", "planning", history, info)
    assert later.startswith("The 3-steps action history:\nStep 1, actionList {}, action_feedback:Action is empty, no "
                            "action taken.")  # the last three turns, numbered from 0 in the episode
    assert "Step 0," not in later and "\nStep 3, actionList {}" in later
    assert "to achieve the human instruction: '<Place> the red block" in later and "The task name is" not in later
    assert "Only the first" not in later


def test_tier3_first_turn_has_no_task_statement_and_its_own_template() -> None:
    text = turn_text("grab_roller", "fine", [], "INFO")
    assert text.startswith("\n!!!!! Assistant info (Very Important to provide some key info): INFO\n")
    assert "grab the roller" not in text and "The task name is" not in text
    assert "End-Effector Pose Control mode" in text and "quaternion (qx, qy, qz, qw)" in text
    later = turn_text("grab_roller", "fine", [TurnRecord([], [EMPTY_FEEDBACK], index=0, listed="{}")], "INFO")
    goal = "use both arms to grab the roller on the table and lift it to z>0.8(m)"
    assert f"to achieve the human instruction: '{goal}'" in later


def test_example_images_where_the_original_sends_them_ship_with_mallvi() -> None:
    for name in PLANNING_TASKS:
        file_name = example_image_name(name, "planning")
        assert file_name == f"{name}.png"
        png = packaged_example(file_name)
        assert png is not None and png[:8] == b"\x89PNG\r\n\x1a\n", name
    assert example_image_name("place_burger_fries_ee", "fine") == "place_burger_fries.png"
    for name in ("grab_roller", "place_object_scale", "place_bread_skillet_ee", "stack_blocks_two"):
        assert example_image_name(name, "fine") is None


def test_the_benchmark_limits_are_the_originals_and_every_task_has_a_fidelity_row() -> None:
    data = json.loads(Path("mallvi/bench/data/paper_prompts.json").read_text(encoding="utf-8"))
    for name, entry in data["tasks"].items():
        task = get_task(name)
        assert (task.max_turns, task.chunk) == (entry["action_limit"], entry["action_chunk_num"]), name
    manipulation = {n for n in TASKS if not n.startswith("grounding_")}
    assert set(data["tasks"]) == manipulation == set(FIDELITY_TASKS)


def test_docs_show_the_fidelity_table() -> None:
    docs = Path("docs/benchmark.md").read_text(encoding="utf-8")
    assert markdown_table() in docs
