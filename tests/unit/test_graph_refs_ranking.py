"""Size words rank the instruction's blocks, not every block-shaped thing perception finds."""

from __future__ import annotations

import pytest

from mallvi.graph.agent_errors import RefusalError
from mallvi.graph.backends.rules.grammar.parser import parse_instruction, stated_count
from mallvi.graph.binding import bind_plan
from mallvi.graph.refs import ResolutionError, candidates_of, resolve
from mallvi.graph.schemas import ObjectRef, SceneMemory, SceneObject

TABLE_Z = 0.74
RANKING = ("There are three blocks on the table, move the blocks to the center of the table, and arrange them from "
           "largest to smallest, from left to right.")


def obj(oid: str, color: str, x: float, y: float, size: tuple[float, float, float], label: str = "block",
        bottom: float = TABLE_Z, extent: tuple[float, float, float] | None = None) -> SceneObject:
    """An object resting at ``bottom``; ``size`` in its own frame, ``extent`` axis-aligned (default the same)."""
    return SceneObject(id=oid, label=label, color=color, position_m=(x, y, bottom + size[2] / 2),
                       size_m=extent or size, box_m=size)


def blocks() -> list[SceneObject]:
    # the largest block turned by 45 degrees: its axis-aligned extent is 1.41 times as wide
    return [obj("red_block", "red", 0.2, 0.0, (0.062, 0.062, 0.062), extent=(0.088, 0.088, 0.062)),
            obj("green_block", "green", -0.1, 0.0, (0.051, 0.051, 0.051)),
            obj("blue_block", "blue", 0.05, -0.05, (0.039, 0.039, 0.039))]


def ref(size: str, among: int | None = 3) -> ObjectRef:
    return ObjectRef(phrase=f"the {size} block", label="block", size=size, among=among)  # type: ignore[arg-type]


def ranks(objects: list[SceneObject], among: int | None = 3) -> tuple[str, str, str]:
    cands = candidates_of(objects)
    a, b, c = (resolve(ref(s, among), cands).name for s in ("largest", "medium", "smallest"))
    return a, b, c


def test_instruction_count_picks_the_blocks_among_dice_and_sponges() -> None:
    distractors = [
        # dice of the blocks' own colours: cube-shaped, but far smaller than any of the three
        obj("red_block_2", "red", -0.3, 0.2, (0.02, 0.02, 0.02)),
        obj("blue_block_2", "blue", 0.3, 0.25, (0.021, 0.02, 0.021)),
        # a sponge larger than the smallest block, an eraser, an upright toy figure: not cube-shaped
        obj("yellow_block", "yellow", 0.4, -0.1, (0.07, 0.045, 0.025)),
        obj("pink_block", "pink", -0.4, 0.1, (0.05, 0.022, 0.012)),
        obj("cyan_block", "cyan", 0.0, 0.25, (0.026, 0.021, 0.06)),
    ]
    assert ranks(blocks() + distractors) == ("red_block", "green_block", "blue_block")
    # without the count every block-shaped thing takes a rank (how it was): a die is "the smallest block"
    assert ranks(blocks() + distractors, among=None)[2] == "red_block_2"


def test_cups_and_arm_parts_are_not_among_the_blocks() -> None:
    others = [
        # a cup labelled "block" (4.7 cm wide, 6.1 cm tall), one half hidden, a box 24 cm across at the table's
        # left end where a small coloured patch was seen against an arm
        obj("orange_block", "orange", 0.4, 0.13, (0.047, 0.047, 0.061)),
        obj("yellow_block", "yellow", -0.33, 0.17, (0.048, 0.048, 0.056)),
        obj("cyan_block", "cyan", -0.51, -0.1, (0.241, 0.241, 0.212)),
    ]
    assert ranks(blocks() + others) == ("red_block", "green_block", "blue_block")


def test_own_frame_size_ranks_a_turned_block_by_its_real_volume() -> None:
    turned = [obj("green_block", "green", 0.0, 0.0, (0.054, 0.054, 0.054), extent=(0.076, 0.076, 0.054)),
              obj("red_block", "red", 0.2, 0.0, (0.06, 0.06, 0.06)),
              obj("blue_block", "blue", -0.2, 0.0, (0.04, 0.04, 0.04))]
    assert ranks(turned) == ("red_block", "green_block", "blue_block")


def test_a_floating_detection_is_not_ranked() -> None:
    # 12 cm above the table at its left end, resting on nothing (a part of an arm): not the largest block
    arm_part = obj("grey_block", "grey", -0.5, 0.0, (0.07, 0.07, 0.07), bottom=TABLE_Z + 0.12)
    assert ranks([*blocks(), arm_part]) == ("red_block", "green_block", "blue_block")
    assert ranks([*blocks(), arm_part], among=None) == ("red_block", "green_block", "blue_block")
    # a block lying on another one rests on it and keeps its rank
    stacked = blocks()
    g = stacked[1]
    stacked[1] = g.model_copy(update={"position_m": (0.2, 0.0, TABLE_Z + 0.062 + 0.0255)})
    assert ranks(stacked) == ("red_block", "green_block", "blue_block")


def test_no_clear_group_is_refused_not_guessed() -> None:
    # a fourth cube between the others' sizes: any three of the four are about as alike
    fourth = obj("yellow_block", "yellow", 0.3, 0.2, (0.045, 0.045, 0.045))
    with pytest.raises(ResolutionError, match="ambiguous: the instruction speaks of 3 blocks and 4 cube-shaped"):
        ranks([*blocks(), fourth])
    # one of the three hidden and only flat or long things besides
    seen = [*blocks()[:2], obj("yellow_block", "yellow", 0.4, -0.1, (0.07, 0.045, 0.025)),
            obj("purple_block", "purple", 0.3, 0.1, (0.11, 0.015, 0.015))]
    with pytest.raises(ResolutionError, match="only 2 cube-shaped ones are seen"):
        ranks(seen)


def test_identical_dice_are_not_a_group_a_size_word_can_rank() -> None:
    # four 2 cm dice of the clutter: any three of them are more alike than the blocks, but cannot be ranked
    dice = [obj(f"clutter_{i}", "white", -0.35 + 0.1 * i, 0.25, (0.02, 0.02, 0.02), label="clutter")
            for i in range(4)]
    assert ranks(blocks() + dice) == ("red_block", "green_block", "blue_block")
    # with the smallest block hidden the dice still do not stand in for it
    with pytest.raises(ResolutionError, match="ambiguous"):
        ranks(blocks()[:2] + dice)


def test_a_die_does_not_stand_in_for_a_block_not_seen() -> None:
    # the smallest block hidden (under an arm, out of view): a die would be the third cube-shaped object
    seen = [*blocks()[:2], obj("orange_block", "orange", 0.15, 0.27, (0.02, 0.02, 0.02))]
    with pytest.raises(ResolutionError, match="no 3 cube-shaped ones of alike sizes"):
        ranks(seen)


def test_a_block_read_as_round_keeps_its_rank_and_two_of_three_rank_nothing() -> None:
    # the smallest block, put down at an angle, read "round" by perception: still one of the three
    three = blocks()
    three[2] = three[2].model_copy(update={"id": "blue_round", "label": "round"})
    assert ranks(three) == ("red_block", "green_block", "blue_round")
    # only two of the three seen: which one is the smallest cannot be told
    with pytest.raises(ResolutionError, match="speaks of 3 blocks, but only 2 are seen"):
        ranks(blocks()[:2])


def test_binding_refuses_with_the_reason() -> None:
    plan = parse_instruction(RANKING)
    scene = SceneMemory(objects=[*blocks(), obj("yellow_block", "yellow", 0.3, 0.2, (0.045, 0.045, 0.045))])
    with pytest.raises(RefusalError, match="cube-shaped"):
        bind_plan(plan, scene)
    dice = [*blocks(), obj("white_block", "white", 0.3, 0.2, (0.02, 0.02, 0.02))]
    assert bind_plan(plan, SceneMemory(objects=dice)) == {
        "largest_block": "red_block", "medium_block": "green_block", "smallest_block": "blue_block"}


def test_slots_stay_put_when_a_member_is_not_found() -> None:
    from mallvi.graph.backends.rules.thinker.thinker import slot_targets

    scene = SceneMemory(objects=blocks())
    three = slot_targets(["red_block", "green_block", "blue_block"], scene)
    assert slot_targets(["red_block"], scene, 3) == three


def test_grammar_carries_the_stated_count() -> None:
    assert stated_count(RANKING) == 3
    assert stated_count("stack the blocks from largest to smallest") is None
    plan = parse_instruction(RANKING)
    assert {s.obj.among for s in plan.subtasks} == {3}
    assert all(r.among == 3 for s in plan.subtasks for r in s.group)
    # "medium" implies three; a lone size word ranks among everything, as before
    assert {s.obj.among for s in parse_instruction("stack the blocks from largest to smallest").subtasks} == {3}
    assert parse_instruction("pick up the largest block").subtasks[0].obj.among is None
    assert parse_instruction("there are five blocks on the table, pick up the largest block").subtasks[0].obj.among \
        == 5
    with pytest.raises(RefusalError, match="speaks of 2 blocks but ranks 3"):
        parse_instruction("there are two blocks on the table, arrange them from largest to smallest")
    # colour references are not affected
    assert parse_instruction("there are three blocks, stack the red block on the blue block").subtasks[0].obj.among \
        is None


def test_when_exactly_three_are_called_blocks_the_dice_beside_them_do_not_make_the_ranking_ambiguous() -> None:
    """A scene graph that names the blocks apart from the clutter (simulator perception: "clutter" for a die of
    2.7 cm) ranks the three blocks; when the die is called a block too (colour perception), its size decides."""
    three = [obj("red_block", "red", 0.2, 0.0, (0.065, 0.065, 0.065)),
             obj("green_block", "green", -0.1, 0.0, (0.049, 0.049, 0.049)),
             obj("blue_block", "blue", 0.05, -0.05, (0.038, 0.038, 0.038))]
    die = obj("clutter_4", "grey", -0.3, 0.1, (0.027, 0.027, 0.027), label="clutter")
    assert ranks([*three, die]) == ("red_block", "green_block", "blue_block")
    # the die called a block: 2.7, 3.8 and 4.9 cm rank as well as 3.8, 4.9 and 6.5 cm; not told
    with pytest.raises(ResolutionError, match="no 3 clearly alike"):
        ranks([*three, die.model_copy(update={"label": "block"})])
