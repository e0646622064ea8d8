"""How far each task's result can be put beside the paper's: the differences from the original benchmark that
remain under the single agent's paper protocol, and which way each should move our score.

``comparable(cfg, task)`` says whether a result row is comparable with the paper's table and why; the report marks
every row with it. ``markdown_table()`` renders the differences for docs/benchmark.md (a test keeps the two equal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from mallvi.bench.bench_config import BenchConfig

#: which way a difference should move our score against the paper's: up, down, either way, or not at all
Direction = Literal["up", "down", "either", "none"]


@dataclass(frozen=True)
class Difference:
    what: str
    direction: Direction


@dataclass(frozen=True)
class Comparability:
    comparable: bool
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"comparable": self.comparable, "why": self.why}


COMMON: tuple[Difference, ...] = (
    Difference("One arm model for every task (Piper kinematics on 0.2 m pedestals on the table); the original uses "
               "each task's robot (ARX-X5, Franka, Piper) at the same arm spacing.", "either"),
    Difference("A closed gripper holds an object once both fingers touch it (a physics drive); the original's "
               "grip holds by friction and can slip.", "up"),
    Difference("Our scenes, objects, textures and lights (the task's domain randomisation as the original "
               "configures it) and our renderer.", "either"),
    Difference("Every reply gets the JSON repairs (code fences, text around the object, Python literals) the "
               "original applies to most model families but not to GPT-family replies.", "up"),
    Difference("Example images are ours (our scene, start and a goal state the expert reached, the task's example "
               "reply), in the original's layout.", "either"),
    Difference("The fixed poses and orientations the info gives (hand-over and middle poses, recommended "
               "quaternions) are the original's, chosen for its robots; ours reach most, not all, of them.", "down"),
)
COMMON_PLANNING: tuple[Difference, ...] = (
    Difference("place_actor aligns only the object's yaw; pre_dis_axis, align_axis, actor_axis and "
               "actor_axis_type are ignored.", "either"),
    Difference("Contact and functional point ids name our objects' points; ids the info recommends for the "
               "original's models may grasp elsewhere.", "down"),
    Difference("A place of an object the arm does not hold is reported as failed; the original moves the arm "
               "anyway.", "up"),
    Difference("arm_tag \"both\" moves the left arm, then the right; the original moves them together.", "either"),
    Difference("Where the original's functional point 0 is a point ours numbers otherwise (the mug's handle, the "
               "microphone's head), the place aims that point by shifting the target: exact when the object does "
               "not turn.", "either"),
)
COMMON_FINE: tuple[Difference, ...] = (
    Difference("The info states our gripper height (0.13 m, end-effector pose to fingertips) instead of the "
               "original robot's 0.162/0.144 m, and our objects' centres as their positions.", "none"),
    Difference("Targets closer together than our safety guard allows leave the right arm where it is; the "
               "original's arms may collide.", "either"),
)

#: per task: its own remaining differences, and whether its row is comparable at all (with why not)
TASKS: dict[str, tuple[tuple[Difference, ...], str | None]] = {
    "place_cans_plasticbox": ((
        Difference("Cans are cylinders (Ø0.07-0.08 m) and the box an open box of ours; its two spots (the info's "
                   "functional points, the refusal's reference) lie on a diagonal of its floor.", "either"),), None),
    "blocks_cross_shape": ((
        Difference("Block centres start at least 0.08 m apart (the original's 0.10 m).", "either"),), None),
    "blocks_ranking_size": ((
        Difference("Every block starts anywhere in x ∈ [-0.28, 0.28]; the original draws red, green and blue in "
                   "the left, middle and right thirds first (nearer their goal order).", "down"),), None),
    "blocks_ranking_rgb": ((
        Difference("No keep-out of |x| < 0.05 m and around (0, -0.1); a layout already solved is skipped (recorded), "
                   "not drawn again.", "either"),), None),
    "stack_blocks_three": ((
        Difference("The blocks keep out of a 0.08 m disc around (0, -0.13) (the original: |x| ≥ 0.05 m and 0.15 m "
                   "around (0, -0.1)).", "either"),), None),
    "stack_bowls_three": ((
        Difference("Bowls are Ø0.18 m (larger than the original's) and start at least 0.19 m apart.", "either"),),
        None),
    "handover_mic": ((
        Difference("The info's contact point lists and hand-over quaternions are the original's, for its "
                   "microphone; ours has its own 14 contact points.", "down"),
        Difference("The receiver \"holds\" the microphone by simulator truth (between its closed fingers); the "
                   "original asks for gripper contact and a closed command.", "either")), None),
    "handover_block": ((
        Difference("Block and pad start nearer the robot (block y ∈ [-0.08, 0.04], pad y ∈ [0, 0.05]; the "
                   "original's y ∈ [0, 0.25] and [0.15, 0.2]).", "up"),), None),
    "hanging_mug": ((
        Difference("Rack at x ∈ [0.15, 0.22], y ∈ [-0.05, 0.05], no yaw, hook 0.14 m above the table (original: "
                   "x ∈ [0.10, 0.30], y ∈ [0.13, 0.17], ±0.2 rad, 0.20 m); one mug model (original: ten).",
                   "either"),), "the rack stands elsewhere and lower than the original's"),
    "place_burger_fries": ((
        Difference("Burger and fries box are our shapes; the tray's two targets are our drop points.", "either"),),
        None),
    "place_object_basket": ((
        Difference("The toy is our shape (original: a toy car or playing cards); the basket's two spots are "
                   "ours.", "either"),), None),
    "place_bread_skillet": ((
        Difference("Our skillet (Ø0.20 m, 0.12 m handle pointing outwards); the info's skillet poses follow the "
                   "original's formula from our arms' poses.", "either"),
        Difference("A skillet pose whose pan or handle would stand in an arm's pedestal is drawn again.", "either")),
        None),
    "blocks_tower": ((
        Difference("The two columns start at |x| ∈ [0.15, 0.25], y ∈ [-0.10, 0.05] (the original's |x| ∈ "
                   "[0.20, 0.26], y ∈ [-0.05, 0.10]): nearer the robot.", "up"),), None),
    "put_bottles_dustbin": ((
        Difference("Our bin stands on the table at (-0.38, -0.05) with a 0.08 m rim (the original's on the floor "
                   "beside a table shifted 0.3 m); the info's drop pose is ours; bottles start at x ∈ [-0.15, 0.25], "
                   "y ∈ [-0.15, 0.05] (the original's x ∈ [-0.25, 0.30], y ∈ [0.03, 0.16]).", "either"),
        Difference("The original's contact_point_id 0/1 grasp shift (±0.06 m) is not reproduced.", "down")),
        "the bin and the way bottles go into it differ from the original's"),
    "place_object_scale": ((
        Difference("A 4 cm block instead of the original's bell meshes (Ø0.10-0.13 m).", "up"),),
        "the object to place is a block, not the original's bell"),
    "place_burger_fries_ee": ((
        Difference("Burger and fries box are our shapes; the tray's two targets are our drop points.", "either"),),
        None),
    "place_bread_skillet_ee": ((
        Difference("Our skillet's handle points along x (the original's along -y): the info gives our handle's "
                   "position and grasp orientation, and keeps the original's fixed place poses.", "either"),
        Difference("The info's final bread pose [0, -0.15, 1, 0.707, 0, 0.707, 0] has no IK for our right arm "
                   "(our left arm reaches it).", "down"),
        Difference("A skillet pose whose pan or handle would stand in an arm's pedestal is drawn again.", "either")),
        None),
    "grab_roller": ((
        Difference("Success needs both grippers closed and the roller held by an arm (our simulator attaches an "
                   "object to one gripper at a time); the original: both grippers closed and z > 0.8 m.", "either"),),
        None),
    "stack_blocks_two": ((
        Difference("The blocks keep out of a 0.08 m disc around (0, -0.13) (the original: |x| ≥ 0.05 m and 0.15 m "
                   "around (0, -0.1)).", "either"),), None),
}

MALLVI_PROTOCOL = ("the single agent's mallvi protocol (mallvi's own prompt and inputs, grasps that lift and check, "
                   "no freeze after a failed plan, strict parsing): not the original's")
GRAPH = "mallvi's agents (graph, perception, skills), not the paper's single-model protocol"


def differences(task: str) -> tuple[Difference, ...]:
    """Every remaining difference of ``task`` under the paper protocol (common ones first)."""
    own, _ = TASKS[task]
    tier = COMMON_FINE if task in _FINE else COMMON_PLANNING
    return (*COMMON, *tier, *own)


_FINE = frozenset({"place_object_scale", "place_burger_fries_ee", "place_bread_skillet_ee", "grab_roller",
                   "stack_blocks_two"})  # fmt: skip


def comparable(cfg: BenchConfig, task: str) -> Comparability:
    """Whether this run's row for ``task`` can stand beside the paper's, and why (not)."""
    if cfg.agent == "expert":
        return Comparability(False, "the expert reads simulator truth")
    if cfg.agent != "single":
        return Comparability(False, GRAPH)
    if cfg.tier == "grounding":
        return Comparability(True, "Tier 1 as the original asks it")
    if cfg.single_protocol != "paper":
        return Comparability(False, MALLVI_PROTOCOL)
    if task not in TASKS:
        return Comparability(False, "no fidelity record for this task")
    _, blocker = TASKS[task]
    if blocker is not None:
        return Comparability(False, blocker)
    return Comparability(True, f"the original's protocol; {len(differences(task))} remaining differences "
                               "(docs/benchmark.md, fidelity table)")


_ARROW = {"up": "↑", "down": "↓", "either": "↕", "none": "–"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_table() -> str:
    """The fidelity table: every task's own differences (and the common ones once), with their direction."""
    lines = ["| task | comparable | remaining difference | score |", "|---|---|---|---|"]
    for d in COMMON:
        lines.append(f"| every task | | {_cell(d.what)} | {_ARROW[d.direction]} |")
    for d in COMMON_PLANNING:
        lines.append(f"| every Tier 2 task | | {_cell(d.what)} | {_ARROW[d.direction]} |")
    for d in COMMON_FINE:
        lines.append(f"| every Tier 3 task | | {_cell(d.what)} | {_ARROW[d.direction]} |")
    for task, (own, blocker) in TASKS.items():
        mark = "yes" if blocker is None else f"no: {blocker}"
        if not own:
            lines.append(f"| {task} | {mark} | only the common ones | |")
        for i, d in enumerate(own):
            lines.append(f"| {task if i == 0 else ''} | {mark if i == 0 else ''} | {_cell(d.what)} | "
                         f"{_ARROW[d.direction]} |")
    return "\n".join(lines) + "\n"
