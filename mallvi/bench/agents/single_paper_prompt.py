"""The single agent's turn text under the paper protocol: the original benchmark's prompt, assembled as it does.

Tier 2, first turn: the original's system prompt (task name and description); later turns: its "3-steps action
history" block, which restates the description. Tier 3, first turn: nothing (no task statement at all); later
turns: the same history block. Then, every turn and both tiers: the assistant info (``single_paper_info``), the
tier's output template and the task's example reply (``json.dumps(..., indent=4)``). The texts are the original's
(``bench/data/paper_prompts.json``); the chunk size is never stated, as in the original.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources

from mallvi.bench.agents.agent_protocols import TurnRecord
from mallvi.bench.agents.single_paper_info import paper_data

INFO_LEAD = "\n!!!!! Assistant info (Very Important to provide some key info): "
HISTORY_LEAD = "The 3-steps action history:"
HISTORY_STEP = "\nStep {}, actionList {}, action_feedback:{}"
FOLLOW_UP = (
    "\n\n Considering the above interaction history and the current image state, to achieve the human instruction: "
    "'{}', you are supposed to output in json. You need to describe current visual state from the image, summarize "
    "interaction history and environment feedback and reason why the last action or plan failed and did not finish "
    "the task, output your new plan to achieve the goal from current state. At the end, output the actions."
)
#: the original's unusable-reply feedback (the "{}" action list)
EMPTY_FEEDBACK = (
    "Action is empty, no action taken. If task is not finished, check the task is finished or not according to the "
    "image.\n"
)
HISTORY_TURNS = 3
#: Tier 3 tasks that have an example image, by the Tier 2 task whose image it is (the original has one only there)
FINE_EXAMPLES = {"place_burger_fries_ee": "place_burger_fries"}


def description(task_name: str) -> str:
    """The original's ``full_description`` of the task, word for word."""
    return str(paper_data()["tasks"][task_name]["full_description"])


def history_block(history: Sequence[TurnRecord], goal: str) -> str:
    """The original's history block: the last three turns (numbered from 0 over the whole episode), each with
    its action list as the model gave it (after the chunk cut) and the concatenated feedback lines."""
    lines = [HISTORY_STEP.format(r.index, r.listed, "".join(r.feedback)) for r in history[-HISTORY_TURNS:]]
    return HISTORY_LEAD + "".join(lines) + FOLLOW_UP.format(goal)


def turn_text(task_name: str, tier: str, history: Sequence[TurnRecord], info: str) -> str:
    """The whole text of one turn (the images are attached around it by the agent)."""
    data = paper_data()
    goal = description(task_name)
    if history:
        lead = history_block(history, goal)
    elif tier == "planning":
        lead = str(data["system_prompt"]).format(task_name, goal)
    else:
        lead = ""
    template = data["template"] if tier == "planning" else data["template_vla"]
    example = json.dumps(data["tasks"][task_name]["template_example"], indent=4)
    return lead + INFO_LEAD + info + "\n" + template + example + "\n\n"


def example_image_name(task_name: str, tier: str) -> str | None:
    """The task's example image file (Tier 2: every task; Tier 3: only place_burger_fries), or None."""
    if tier == "planning":
        return f"{task_name}.png"
    source = FINE_EXAMPLES.get(task_name)
    return None if source is None else f"{source}.png"


def packaged_example(file_name: str) -> bytes | None:
    """An example image shipped with mallvi (``bench/data/example_<task>.png``), or None."""
    ref = resources.files("mallvi.bench").joinpath(f"data/example_{file_name}")
    return ref.read_bytes() if ref.is_file() else None
