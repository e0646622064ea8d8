"""What each ST-BiBench task is, for ``mallvi tasks``: tier, paper id, instruction, arm layout, turns and chunk,
the arm-allocation check and the original's domain randomisation."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from mallvi.bench.domains import TASK_DOMAINS, is_cluttered
from mallvi.bench.tasks import get_task
from mallvi.bench.tiers import PAPER_IDS, TIER_TASKS, TIERS, TierName
from mallvi.sim_bridge.layout import arm_base_position


@dataclass(frozen=True)
class TaskInfo:
    """One task as the benchmark runs it.

    ``arm_bases_xy_m`` is where each arm's base stands in the world frame (x, y in metres); ``max_turns`` is the
    planner's turn limit (Tier 1: attempts at a parsable answer; Tier 3 goes on up to 1.5× while at most 12
    actions ran), ``chunk`` how many actions of a plan run per turn; ``allocation_threshold_m`` the arm-allocation
    check of ``grasp_actor`` (None: no check).
    """

    tier: TierName
    name: str
    paper_id: str
    instruction: str
    arm_spacing_m: float
    arm_bases_xy_m: dict[str, list[float]]
    max_turns: int
    chunk: int
    allocation_threshold_m: float | None
    domain_config: str
    cluttered: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def task_info(name: str) -> TaskInfo:
    """The ``TaskInfo`` of one registered task (KeyError names the known ones)."""
    task = get_task(name)
    spacing = float(task.scene_spec("none").arm_spacing_m)
    bases = {side: [round(c, 3) for c in arm_base_position(side, spacing)[:2]] for side in ("left", "right")}
    return TaskInfo(tier=task.tier, name=task.name, paper_id=PAPER_IDS.get(task.name, task.name),
                    instruction=" ".join(task.instruction.split()), arm_spacing_m=spacing, arm_bases_xy_m=bases,
                    max_turns=int(task.max_turns), chunk=int(task.chunk),
                    allocation_threshold_m=task.allocation_threshold_m, domain_config=TASK_DOMAINS[name].config,
                    cluttered=is_cluttered(name))


def task_infos(tier: TierName | None = None) -> list[TaskInfo]:
    """Every task of ``tier`` (all tiers when None), in the paper's column order."""
    tiers = TIERS if tier is None else (tier,)
    return [task_info(name) for t in tiers for name in TIER_TASKS[t]]
