"""The rules Decomposer's instruction grammar: phrasings it was not written for, and refusals."""

from __future__ import annotations

from itertools import pairwise

import pytest

from mallvi.graph.agent_errors import RefusalError
from mallvi.graph.backends.rules.grammar.parser import parse_instruction


def steps(text: str) -> list[tuple[str, str, str | None, str | None]]:
    plan = parse_instruction(text)
    return [(s.action, s.obj.key(), s.relation, s.target.key() if s.target else None) for s in plan.subtasks]


def goal(text: str) -> list[str]:
    return [str(p) for p in parse_instruction(text).goal]


@pytest.mark.parametrize("text", [
    "stack the green block on the red block",
    "Stack the green cube onto the red cube.",
    "put the green box on top of the red one",
    "place the green block on the red block please",
    "set the green brick upon the red brick",
    "onto the red block, put the green one",
    "pick up the green block and put it on the red block",
    "grab the green cube, then place it on top of the red cube",
    "using the left arm, stack the green block on the red block",
])
def test_stacking_phrasings_give_the_same_goal(text: str) -> None:
    assert goal(text) == ["on(green_block, red_block)"]
    assert len(parse_instruction(text).subtasks) == 1


def test_arm_clause_becomes_the_arm_hint() -> None:
    plan = parse_instruction("with the right arm, put the red cube on the blue cube")
    assert plan.subtasks[0].arm_hint == "right" and plan.arm_mode == "right"


def test_three_level_stack_is_built_bottom_up() -> None:
    assert steps("stack the red block on the green block on the blue block") == [
        ("stack", "green_block", "on", "blue_block"), ("stack", "red_block", "on", "green_block")]


@pytest.mark.parametrize(("text", "order"), [
    ("place the red, green and blue blocks from left to right", ["red", "green", "blue"]),
    ("arrange the blue, red and green cubes from right to left", ["green", "red", "blue"]),
    ("rank the blocks by colour", ["red", "green", "blue"]),
    ("line up the yellow and black blocks from left to right", ["yellow", "black"]),
])
def test_arrangements_become_ordered_slots(text: str, order: list[str]) -> None:
    plan = parse_instruction(text)
    assert [s.obj.color for s in plan.subtasks] == order
    assert [s.slot for s in plan.subtasks] == list(range(len(order)))
    assert goal(text) == [f"left_of({a}_block, {b}_block)" for a, b in pairwise(order)]


def test_size_ranking_and_towers() -> None:
    assert [s.obj.size for s in parse_instruction("sort the blocks by size from left to right").subtasks] == [
        "largest", "medium", "smallest"]
    assert steps("build a tower from largest to smallest") == [
        ("stack", "medium_block", "on", "largest_block"), ("stack", "smallest_block", "on", "medium_block")]


def test_relations_and_references_back() -> None:
    assert steps("move the red block to the left of the blue block then put the green block on it") == [
        ("place", "red_block", "left_of", "blue_block"), ("place", "green_block", "on", "red_block")]
    assert goal("put the red cube in the bowl") == ["in(red_block, bowl)"]
    assert goal("put the red block behind the green block") == ["behind(red_block, green_block)"]
    assert goal("place the blue block under the red block") == ["on(red_block, blue_block)"]
    assert steps("put the red block next to the green block") == [("place", "red_block", "next_to", "green_block")]


def test_handover_and_pick() -> None:
    plan = parse_instruction("hand over the red block from the left arm to the right arm")
    assert plan.subtasks[0].action == "handover" and plan.subtasks[0].arm_hint == "left"
    assert goal("pass the red cube to the right hand") == ["held_by(red_block, right)"]
    assert goal("lift the yellow cube") == ["lifted(yellow_block)"]


def test_memory_tag_for_a_previous_location() -> None:
    plan = parse_instruction("move the red block next to the blue block, then put it back where it was")
    back = plan.subtasks[1]
    assert back.relation == "at" and back.memory[0].kind == "previous_location" and back.memory[0].of == "red_block"


@pytest.mark.parametrize(("text", "why"), [
    ("", "empty"),
    ("sing a song", "no manipulation verb"),
    ("put the red block", "where to put"),
    ("stack the red block on the red block", "itself"),
    ("put the red block on the blue block and the blue block on the red block", "contradictory"),
    ("put the red block on the blue block and under the blue block", "contradictory"),
    ("put the red block on the blue block and on the green block", "at once"),
    ("place the red block left of the blue block and the blue block left of the red block", "contradictory"),
    ("hand over the red block from the left arm to the left arm", "two different arms"),
])
def test_refusals_say_why(text: str, why: str) -> None:
    with pytest.raises(RefusalError, match=why):
        parse_instruction(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("There are three blocks on the table, the color of the blocks is red, green and blue, move the blocks to the "
     "center of the table, and stack the blue block on the green block, and the green block on the red block.",
     [("place", "red_block", "center", None), ("stack", "green_block", "on", "red_block"),
      ("stack", "blue_block", "on", "green_block")]),
    ("Place the red block, green block, and blue block in the order of red, green, and blue from left to right, "
     "placing in a row.",
     [("move", f"{c}_block", "slot", None) for c in ("red", "green", "blue")]),
    ("Use the left arm to grasp the red block on the table, handover it to the right arm and place it on the blue "
     "pad.", [("handover", "red_block", None, None), ("place", "red_block", "on", "blue_pad")]),
])
def test_the_benchmark_sentences_parse(text: str, expected: list[tuple[str, str, str | None, str | None]]) -> None:
    assert steps(text) == expected


def test_after_a_handover_the_receiving_arm_carries_on() -> None:
    plan = parse_instruction("use the left arm to grasp the red block, hand it to the right arm and put it on the pad")
    assert [s.arm_hint for s in plan.subtasks] == ["left", "right"]
