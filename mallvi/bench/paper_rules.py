"""How the original benchmark's executor reads a model's Tier 2 action, task by task (data for ``paper_actions``).

Each task file of the original (``envs/<task>.py``, ``take_action_by_dict``) has its own copy of the executor;
they differ in the names they accept for an object (lower-cased substring tests, first match wins), the error
message for an unknown one, which ``arm_tag`` values other than left/right they take, whether they refuse the
misspelt ``function_point_id``, merge ``kwargs`` into a place, and which default ``constrain`` a place gets. The
object each name leads to is ours (e.g. the original's ``object1`` is our ``can_left``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

BothMove = Literal["together", "refuse", "back_only"]


@dataclass(frozen=True)
class Actor:
    """One branch of the original's actor test: any of ``contains`` inside the name, or equal to one of
    ``equals``, means our object ``obj`` (``missing``: the original names an object its scene does not have)."""

    obj: str
    contains: tuple[str, ...] = ()
    equals: tuple[str, ...] = ()
    missing: bool = False


@dataclass(frozen=True)
class TaskRules:
    actors: tuple[Actor, ...]
    invalid_actor: str  # the text after "Invalid actor: {actor}. "
    lower_arm_tag: bool = True
    both_move: BothMove = "together"  # move_by_displacement with a tag other than left/right
    refuse_function_point_id: bool = True
    merge_kwargs: bool = True
    place_lengths: tuple[int, ...] = (7,)
    place_length_text: str = "7"
    constrain_default: str = "auto"
    empty_name_refused: bool = False  # handover_block: an empty action_name is refused first
    #: a grasp with no plannable pre-grasp: "assert" → "Action Failed! This action can't be planned!!!",
    #: "grasp" → "Grasping failed for {arm} arm: target_pose cannot be None for move action."
    unplannable: Literal["assert", "grasp"] = "assert"
    #: a held object's functional point (by id) that is a named point of ours, where our ``fp<id>`` differs
    points: dict[str, dict[int, str]] = field(default_factory=dict)


_BLOCKS3 = (Actor("red_block", ("red",)), Actor("green_block", ("green",)), Actor("blue_block", ("blue",)))
_COLOR_TAG = "Must be 'red_block', 'green_block', 'blue_block' or some object with color tag."

RULES: dict[str, TaskRules] = {
    "place_cans_plasticbox": TaskRules(
        (Actor("can_left", ("left",), ("object1", "left_can", "can_left")),
         Actor("can_right", ("right",), ("object2", "right_can", "can_right")),
         Actor("plasticbox", ("box",), ("plasticbox",))),
        "Must be 'object1', 'left_can', 'can_left', 'object2', 'right_can', 'can_right' or 'plasticbox'.",
        both_move="refuse", refuse_function_point_id=False, merge_kwargs=False, place_lengths=(3, 7),
        place_length_text="3 or 7"),
    "blocks_cross_shape": TaskRules(
        (*_BLOCKS3, Actor("yellow_block", ("yellow",)), Actor("black_block", ("black",))),
        "Must be 'red_block', 'green_block', 'blue_block', 'yellow_block', 'black_block' or some object with color "
        "tag.", place_lengths=(7, 3), place_length_text="7 or 3"),
    "blocks_ranking_size": TaskRules(_BLOCKS3, _COLOR_TAG),
    "blocks_ranking_rgb": TaskRules(_BLOCKS3, _COLOR_TAG),
    "stack_blocks_three": TaskRules(_BLOCKS3, _COLOR_TAG, both_move="back_only", constrain_default="align",
                                    unplannable="grasp"),
    "stack_bowls_three": TaskRules(
        (Actor("bowl1", ("bowl1",)), Actor("bowl2", ("bowl2",)), Actor("bowl3", ("bowl3",))),
        "Must be 'bowl1', 'bowl2', 'bowl3'.", both_move="refuse", constrain_default="align", unplannable="grasp"),
    "handover_mic": TaskRules(
        (Actor("microphone", ("mic",)),), "Must be 'mic' or 'microphone'.", both_move="refuse",
        refuse_function_point_id=False, unplannable="grasp", points={"microphone": {0: "head"}}),
    "handover_block": TaskRules(
        (Actor("red_block", ("block", "box")),), "Must be 'block' or 'box'.", both_move="refuse",
        refuse_function_point_id=False, empty_name_refused=True, unplannable="grasp"),
    "hanging_mug": TaskRules(
        (Actor("mug", ("mug",)),), "Must be 'mug'.", both_move="refuse", unplannable="grasp",
        points={"mug": {0: "handle"}}),
    "place_burger_fries": TaskRules(
        (Actor("burger", ("burger", "left"), ("object1",)),
         Actor("fries", ("fri", "fry", "potato", "right"), ("object2",)),
         Actor("tray", (), ("tray",))),
        "Must be 'object1', 'burger', 'object2', 'French Fries', 'potato' or 'tray'.", lower_arm_tag=False,
        place_lengths=(7, 3), place_length_text="7 or 3"),
    "place_object_basket": TaskRules(
        (Actor("toy", ("playingcards", "toycar", "car", "card")), Actor("basket", ("basket",))),
        "Must be 'toycar' or 'playingcards' or 'basket'.", refuse_function_point_id=False),
    "place_bread_skillet": TaskRules(
        (Actor("bread", ("bread",)), Actor("skillet", ("skillet",))), "Must be 'skillet' or 'bread'.",
        both_move="refuse", refuse_function_point_id=False, unplannable="grasp"),
    "blocks_tower": TaskRules(
        (*_BLOCKS3, Actor("yellow_block", ("yellow",)), Actor("black_block", ("black",), missing=True),
         Actor("white_block", ("white",), missing=True)),
        "Must be 'red_block', 'green_block', 'blue_block', 'yellow_block', 'white_block', 'black_block' or some "
        "object with color tag."),
    "put_bottles_dustbin": TaskRules(
        (Actor("bottle1", ("bottle1",)), Actor("bottle2", ("bottle2",)), Actor("bottle3", ("bottle3",))),
        "Must be 'bottle1', 'bottle2', 'bottle3'.", constrain_default="align"),
}  # fmt: skip


def resolve(rules: TaskRules, name: str) -> Actor | None:
    """The original's first matching branch for a (lower-cased) actor name, or None."""
    for actor in rules.actors:
        if name in actor.equals or any(part in name for part in actor.contains):
            return actor
    return None
