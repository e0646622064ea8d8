"""What an agent is to the benchmark: something that acts in one episode of one task.

Turn-based agents (the expert and the single planner) implement ``Planner``; ``loop.py`` runs them under the
benchmark's turn, chunk and feedback rules. The graph agent drives its own loop and implements ``Agent``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mallvi.bench.tasks.task_base import BenchTask, BenchWorld
from mallvi.tracing.trace import TraceWriter


@dataclass(frozen=True)
class TurnRecord:
    """One executed chunk: the actions run and the feedback sentence of each.

    The paper protocol also keeps the turn's ``index`` in the episode (from 0) and ``listed``, the action list as
    the model gave it (after the chunk cut) in the original's Python form, for its history block.
    """

    actions: list[Any]
    feedback: list[str]
    index: int | None = None
    listed: str | None = None


@dataclass
class PlanReply:
    """A planner's answer for one turn: the actions (Tier 2 dicts or Tier 3 16-vectors) and its raw text."""

    actions: list[Any]
    raw: str = ""
    error: str | None = None  # set when the reply could not be parsed; ``actions`` is then empty
    plan: Any = None  # the paper protocol: ``executable_plan`` as the reply held it ({} when unusable)


@dataclass
class EpisodeStats:
    """What happened in an episode, beyond success."""

    turns: int = 0
    actions: int = 0
    failed_actions: int = 0
    refusals: int = 0
    parse_errors: int = 0
    answers: Mapping[str, str | None] | None = None  # Tier 1 only
    extra: dict[str, Any] = field(default_factory=dict)


class Planner(Protocol):
    """A turn-based agent: given the task, the world and the last turns, return the next plan."""

    def reset(self, task: BenchTask, world: BenchWorld) -> None: ...

    def plan(self, task: BenchTask, world: BenchWorld, history: Sequence[TurnRecord], turn: int) -> PlanReply: ...


class GroundingAnswerer(Protocol):
    """A Tier 1 agent: which arm for each block; None when its output could not be parsed."""

    def answer(self, task: BenchTask, world: BenchWorld, attempt: int) -> Mapping[str, str | None] | None: ...


class Agent(Protocol):
    """An agent that runs a whole episode itself (the graph); returns its stats. Success is judged afterwards."""

    def run_episode(self, task: BenchTask, world: BenchWorld, trace: TraceWriter) -> EpisodeStats: ...
