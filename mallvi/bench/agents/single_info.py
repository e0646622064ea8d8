"""Per-task guidance for the single planner, as the original benchmark gives its model: the main steps, the names
it accepts for each object, parameter advice, and an example reply to imitate.

The facts (which steps, which names, which parameters) follow the ST-BiBench task files; the wording is ours.
Live numbers (targets, positions) come from the task's ``hints`` and are added to the prompt beside these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: the main steps of each Tier 2 task
STEPS: dict[str, str] = {
    "place_cans_plasticbox": "Pick each can with the arm on its side, lift it clear of the box, put it into the "
    "box at its target, lift the arm and send it home, then do the same with the other can.",
    "blocks_cross_shape": "Move the five blocks to the middle of the table as a cross: red on the left, black in "
    "the centre, blue on the right, green at the far end (+y), yellow at the near end. For each block: grasp "
    "it with the closer arm, lift, place it at its target, lift the arm, send it home.",
    "blocks_ranking_size": "Line the blocks up from left to right, largest to smallest. Decide the order from "
    "their sizes, then for each block: grasp with the closer arm, lift, place, lift the arm, send it home.",
    "blocks_ranking_rgb": "Line up red, green and blue from left to right at their targets. For each block: "
    "grasp with the closer arm, lift, place, lift the arm and send it home.",
    "stack_blocks_three": "Put red at the stack centre, then green on red, then blue on green. For each block: "
    "grasp with the closer arm, lift, place, lift the arm (positive z) and send it home.",
    "stack_bowls_three": "Put one bowl at the middle, then nest the second in it and the third in the second. "
    "Grasp each bowl with the closer arm, lift it, place it, lift the arm and send it home.",
    "handover_mic": "Grasp the microphone with the arm on its side, lift it, bring it to the handover point "
    "without opening, grasp it with the other arm, then open the first gripper and move that arm away.",
    "handover_block": "Grasp the block with the closer arm, lift it, bring it to the handover pose without "
    "opening, grasp it with the other arm, open the first gripper, lift that arm and send it home, then place "
    "the block on the pad with the second arm.",
    "hanging_mug": "Grasp the mug with the closer arm, set it down in the middle (x about 0), lift that arm and "
    "send it home, grasp the mug with the other arm, lift and turn it, and hang it on the rack's hook.",
    "place_burger_fries": "Grasp the object on each side with the arm on that side, lift it clear of the tray, "
    "place it at its target on the tray and release, lift the arm and send it home; then the other object.",
    "place_object_basket": "Grasp the toy with the closer arm and put it into the basket; then grasp the basket "
    "with the other arm and lift it a little.",
    "place_bread_skillet": "Grasp the skillet with the closer arm, lift it and bring it towards the middle; "
    "grasp the bread with the other arm, lift it and place it on the skillet.",
    "blocks_tower": "Build one tower at the centre, largest block at the bottom, smallest on top. Decide the "
    "order from the sizes; blocks lying on a block you need first go to the spare spot on their arm's side.",
    "put_bottles_dustbin": "Drop the bottles into the bin on the left, far-left bottle first. The left arm "
    "carries a bottle over the bin and opens; a bottle the right arm picks is handed to the left arm in the "
    "middle first.",
}

#: other names the original accepts for an object (matched case-insensitively, inside the model's text)
ALIASES: dict[str, dict[str, str]] = {
    "place_cans_plasticbox": {"left_can": "can_left", "object1": "can_left", "right_can": "can_right",
                              "object2": "can_right"},
    "place_burger_fries": {"object1": "burger", "french fries": "fries", "potato": "fries", "object2": "fries"},
    "place_burger_fries_ee": {"object1": "burger", "french fries": "fries", "potato": "fries", "object2": "fries"},
    "handover_block": {"box": "red_block", "block": "red_block"},
    "handover_mic": {"mic": "microphone"},
    "put_bottles_dustbin": {"bin": "dustbin"},
}  # fmt: skip

#: parameter advice per task (the original's notes on place_actor and grasp distances)
NOTES: dict[str, str] = {
    "blocks_ranking_rgb": "place_actor: functional_point_id=0 and constrain='align'; grasp_actor: pre_grasp_dis=0.09 "
    "and grasp_dis=0.03 work best.",
    "blocks_ranking_size": "place_actor: functional_point_id=0 and constrain='align'.",
    "blocks_cross_shape": "place_actor: functional_point_id=0 and constrain='align'.",
    "stack_blocks_three": "place_actor: functional_point_id=0 and constrain='align'.",
    "blocks_tower": "place_actor: functional_point_id=0 and constrain='align'; a spare spot serves only the arm "
    "on its side.",
    "place_cans_plasticbox": "place_actor: leave functional_point_id out and use constrain='free'.",
    "place_burger_fries": "place_actor: functional_point_id=0, constrain='free'.",
}

GENERAL = (
    "Lift an arm a little before moving it sideways or placing, but not so high that the object slips. "
    "back_to_origin sends an arm home; send an arm you do not need home so that it does not block the other."
)


def guide(task: str, tier: str) -> str:
    """The task's steps, names and parameter notes as one paragraph (empty parts left out)."""
    parts = [STEPS.get(task, ""), NOTES.get(task, ""), GENERAL if tier == "planning" else ""]
    aliases = ALIASES.get(task)
    if aliases:
        parts.append("Other names accepted for objects: " + ", ".join(f"{a} = {o}" for a, o in aliases.items()) + ".")
    return " ".join(p for p in parts if p)


def example_reply(objects: Sequence[str], tier: str) -> dict[str, Any]:
    """An example answer in the required format (placeholders in capitals), naming this scene's first object."""
    actor = objects[0] if objects else "OBJECT"
    if tier == "fine":
        plan: list[Any] = [["LEFT X", "Y", "Z", "QW", "QX", "QY", "QZ", 1, "RIGHT X", "Y", "Z", "QW", "QX", "QY",
                            "QZ", 1]]  # fmt: skip
    else:
        plan = [
            {"action_id": "2.2", "action_name": "grasp_actor",
             "parameters": {"actor": actor, "arm_tag": "LEFT OR RIGHT"}},
            {"action_id": "2.4", "action_name": "move_by_displacement",
             "parameters": {"arm_tag": "THE SAME ARM", "z": "A LIFT IN METRES"}},
            {"action_id": "2.3", "action_name": "place_actor",
             "parameters": {"actor": actor, "arm_tag": "THE SAME ARM",
                            "target_pose": "[7 NUMBERS FROM THE ASSISTANT INFO]"}},
        ]  # fmt: skip
    return {
        "visual_state_description": "WHAT YOU SEE: the objects, where they are, the grippers.",
        "reasoning_and_reflection": "WHAT THE LAST ACTIONS DID, WHY ONE FAILED, WHAT TO DO NOW.",
        "language_plan": "THE NEXT STEPS IN WORDS.",
        "executable_plan": plan,
    }


def resolve_actor(task: str, name: str, objects: Mapping[str, Any] | Sequence[str]) -> str | None:
    """The scene object a model's name means, leniently: exact, then an alias, then the one object whose name's
    words (e.g. the colour) all occur in it, then the one object whose distinctive word occurs; None if unclear."""
    names = list(objects)
    text = name.strip().lower()
    if text in names:
        return text
    norm = text.replace("-", "_").replace(" ", "_").strip("_()'\"")
    if norm in names:
        return norm
    for alias, obj in sorted(ALIASES.get(task, {}).items(), key=lambda kv: -len(kv[0])):
        if alias in text and obj in names:
            return obj
    whole = [n for n in names if all(w in text for w in n.split("_"))]
    if len(whole) == 1:
        return whole[0]
    common = set.intersection(*(set(n.split("_")) for n in names)) if len(names) > 1 else set()
    partial = [n for n in names if any(w in text for w in n.split("_") if w not in common)]
    return partial[0] if len(partial) == 1 else None
