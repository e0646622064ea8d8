"""The three ST-BiBench tiers: their names, their tasks (registry names) and the paper's task ids."""

from __future__ import annotations

from typing import Literal

TierName = Literal["grounding", "planning", "fine"]
TIERS: tuple[TierName, ...] = ("grounding", "planning", "fine")

#: Tier 1 — Foundational Spatial Grounding (the answer per block is LEFT or RIGHT).
GROUNDING_TASKS: tuple[str, ...] = ("grounding_sparse", "grounding_dense", "grounding_cluttered")

#: Tier 2 — Strategic Coordination Planning, in the column order of the paper's Table 1.
PLANNING_INDEPENDENT: tuple[str, ...] = (
    "place_cans_plasticbox",
    "blocks_cross_shape",
    "blocks_ranking_size",
    "blocks_ranking_rgb",
    "stack_blocks_three",
    "stack_bowls_three",
)
PLANNING_SEQUENTIAL: tuple[str, ...] = (
    "handover_mic",
    "handover_block",
    "hanging_mug",
    "place_burger_fries",
    "place_object_basket",
    "place_bread_skillet",
    "blocks_tower",
    "put_bottles_dustbin",
)
PLANNING_TASKS: tuple[str, ...] = PLANNING_INDEPENDENT + PLANNING_SEQUENTIAL

#: Tier 3 — Fine-Grained Action Control (16-dim EE actions), in the column order of the paper's Table 3.
#: The two tasks that share a name with Tier 2 carry an ``_ee`` suffix here so that every registry name is unique.
FINE_TASKS: tuple[str, ...] = (
    "place_object_scale",
    "place_burger_fries_ee",
    "place_bread_skillet_ee",
    "grab_roller",
    "stack_blocks_two",
)

TIER_TASKS: dict[TierName, tuple[str, ...]] = {
    "grounding": GROUNDING_TASKS,
    "planning": PLANNING_TASKS,
    "fine": FINE_TASKS,
}

#: The paper's short task ids (Tables 1 and 3), used in reports.
PAPER_IDS: dict[str, str] = {
    "grounding_sparse": "Sparse",
    "grounding_dense": "Dense",
    "grounding_cluttered": "Cluttered",
    "place_cans_plasticbox": "Place1",
    "blocks_cross_shape": "Place2",
    "blocks_ranking_size": "Rank1",
    "blocks_ranking_rgb": "Rank2",
    "stack_blocks_three": "Stack1",
    "stack_bowls_three": "Stack2",
    "handover_mic": "Hand1",
    "handover_block": "Hand2",
    "hanging_mug": "Hand3",
    "place_burger_fries": "Place3",
    "place_object_basket": "Place4",
    "place_bread_skillet": "Place5",
    "blocks_tower": "Place6",
    "put_bottles_dustbin": "Place7",
    "place_object_scale": "Place8",
    "place_burger_fries_ee": "Place9",
    "place_bread_skillet_ee": "Place10",
    "grab_roller": "Grab1",
    "stack_blocks_two": "Stack3",
}


def parse_tier(value: str) -> TierName:
    """Validate a tier name; ValueError lists the valid ones."""
    for t in TIERS:
        if value == t:
            return t
    raise ValueError(f"unknown tier {value!r}; choose one of {', '.join(TIERS)}")


def tier_of(task: str) -> TierName:
    """The tier a task belongs to; ValueError for an unknown task."""
    for tier, tasks in TIER_TASKS.items():
        if task in tasks:
            return tier
    raise ValueError(f"unknown task {task!r}")


def select_tasks(tier: TierName, spec: str) -> list[str]:
    """Resolve ``--tasks`` ("all" or a comma list) within a tier; ValueError names unknown or foreign tasks."""
    known = TIER_TASKS[tier]
    if spec.strip() == "all":
        return list(known)
    names = [s.strip() for s in spec.split(",") if s.strip()]
    if not names:
        raise ValueError("--tasks is empty; give 'all' or a comma-separated list of task names")
    bad = [n for n in names if n not in known]
    if bad:
        raise ValueError(f"task(s) {', '.join(bad)} not in tier {tier!r}; its tasks are: {', '.join(known)}")
    return list(dict.fromkeys(names))
