"""The expert: a scripted, privileged solution per task, run through the same executor and skills as planners
(with the skill semantics of the single agent's protocol: the original's by default).

It proves each task solvable in our simulator; its failures measure the environment-error rate.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from mallvi.bench.agents.agent_protocols import EpisodeStats
from mallvi.bench.agents.expert_ctx import ExpertContext, OutOfBudgetError, SolvedSignal
from mallvi.bench.agents.expert_fine import FINE_SCRIPTS
from mallvi.bench.agents.expert_planning import PLANNING_SCRIPTS
from mallvi.bench.tasks.grounding import GroundingTask
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld
from mallvi.tracing.trace import TraceWriter

log = logging.getLogger(__name__)

SCRIPTS = {**PLANNING_SCRIPTS, **FINE_SCRIPTS}


class ExpertAgent:
    """Runs the task's script; Tier 1 answers from simulator truth."""

    name = "expert"

    def __init__(self, semantics: str = "paper") -> None:
        self.semantics = semantics  # the executor's skill semantics ("paper" or "mallvi"; bench.actions)

    def answer(self, task: BenchTask, world: BenchWorld, attempt: int) -> Mapping[str, str | None] | None:
        if not isinstance(task, GroundingTask):
            raise TypeError(f"{task.name} is not a grounding task")
        return dict(task.truth(world))

    def run_episode(self, task: BenchTask, world: BenchWorld, trace: TraceWriter) -> EpisodeStats:
        script = SCRIPTS.get(task.name)
        if script is None:
            raise KeyError(f"no expert script for {task.name!r}")
        ctx = ExpertContext(task, world, trace, budget=task.max_turns * max(task.chunk, 1), semantics=self.semantics)
        try:
            script(ctx)
        except SolvedSignal:
            pass
        except OutOfBudgetError as e:
            ctx.stats.extra["stopped"] = str(e)
        ctx.stats.turns = -(-ctx.stats.actions // max(task.chunk, 1))  # the turns these actions would fill
        return ctx.stats
