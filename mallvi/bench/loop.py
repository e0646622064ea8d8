"""The benchmark's episode loops: Tier 1 answering, Tier 2 turns with chunks, Tier 3 EE-action turns.

These are mallvi's loops (the single agent's "mallvi" protocol): a turn's chunk is checked whole (every argument of
every action) before its first action runs; a failed action is reported with our skill's reason and the model may
try again. The original benchmark's loops, which the single agent runs by default, are in ``loop_paper``.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from mallvi.bench.actions import action_name, chunk_problem, execute_action, execute_ee_action
from mallvi.bench.agents.agent_protocols import EpisodeStats, GroundingAnswerer, Planner, TurnRecord
from mallvi.bench.tasks.grounding import GroundingTask
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld
from mallvi.contracts.skills import SkillResult
from mallvi.tracing.trace import TraceWriter

HISTORY_TURNS = 3
#: Tier 3 keeps going past the turn limit while at most this many actions have run (up to 1.5× the limit)
FINE_MIN_ACTIONS = 12


def run_grounding(task: GroundingTask, world: BenchWorld, agent: GroundingAnswerer, trace: TraceWriter) -> EpisodeStats:
    """Ask for an answer up to ``task.max_turns`` times until it parses; the caller scores it."""
    stats = EpisodeStats()
    for attempt in range(task.max_turns):
        stats.turns += 1
        answers = agent.answer(task, world, attempt)
        if answers is not None:
            stats.answers = dict(answers)
            break
        stats.parse_errors += 1
        trace.emit("error", where="grounding", message=f"attempt {attempt + 1}: no parsable answer")
    return stats


def run_planning(task: BenchTask, world: BenchWorld, planner: Planner, trace: TraceWriter) -> EpisodeStats:
    """Tier 2: each turn one plan, only its first ``chunk`` actions run; stop at success or the turn limit."""
    stats = EpisodeStats()
    history: deque[TurnRecord] = deque(maxlen=HISTORY_TURNS)
    planner.reset(task, world)
    for turn in range(task.max_turns):
        stats.turns += 1
        if _run_turn(task, world, planner, trace, history, turn, stats, fine=False):
            break
    return stats


def run_fine(task: BenchTask, world: BenchWorld, planner: Planner, trace: TraceWriter) -> EpisodeStats:
    """Tier 3: turns of 16-dim actions; continue while (turn < limit or actions ≤ 12) and turn < ⌈1.5·limit⌉."""
    stats = EpisodeStats()
    history: deque[TurnRecord] = deque(maxlen=HISTORY_TURNS)
    planner.reset(task, world)
    limit = task.max_turns
    turn = 0
    while (turn < limit or stats.actions <= FINE_MIN_ACTIONS) and turn < math.ceil(1.5 * limit):
        stats.turns += 1
        if _run_turn(task, world, planner, trace, history, turn, stats, fine=True):
            break
        turn += 1
    return stats


def _run_turn(
    task: BenchTask,
    world: BenchWorld,
    planner: Planner,
    trace: TraceWriter,
    history: deque[TurnRecord],
    turn: int,
    stats: EpisodeStats,
    *,
    fine: bool,
) -> bool:
    """One turn; True when the task succeeded during it."""
    reply = planner.plan(task, world, list(history), turn)
    if reply.error is not None:
        stats.parse_errors += 1
        trace.emit("error", where="planner", message=f"turn {turn}: {reply.error}")
        history.append(TurnRecord([], [f"Action failed: {reply.error}"]))
        return False
    executed: list[Any] = []
    feedback: list[str] = []
    succeeded = False
    chunk = reply.actions[: task.chunk]
    if _refuse_malformed_chunk(world, chunk, trace, history, stats, fine=fine):
        return False
    for action in chunk:
        result = execute_ee_action(world, action) if fine else execute_action(task, world, action)
        _record(trace, action, result, fine)
        stats.actions += 1
        executed.append(action)
        feedback.append(result.feedback)
        if not result.ok:
            stats.failed_actions += 1
            if result.data.get("refused"):
                stats.refusals += 1
        if task.check_success(world):
            succeeded = True
            break
        if not result.ok:
            break
    if not reply.actions:
        feedback.append("Action failed: the plan was empty.")
    history.append(TurnRecord(executed, feedback))
    return succeeded


def _refuse_malformed_chunk(world: BenchWorld, chunk: list[Any], trace: TraceWriter, history: deque[TurnRecord],
                            stats: EpisodeStats, *, fine: bool) -> bool:
    """Check every argument of every action of a turn's chunk before the first runs; a malformed one refuses the
    whole chunk (nothing moves, one failed action, the planner is told which action and why). True if refused."""
    bad = chunk_problem(world, chunk, fine=fine)
    if bad is None:
        return False
    i, result = bad
    message = f"the plan was refused before its first action: action {i + 1} of {len(chunk)}: {result.message}"
    params = chunk[i].get("parameters") if isinstance(chunk[i], dict) else None
    arm = params.get("arm_tag") if isinstance(params, dict) else ("both" if fine else None)
    name = "execute_ee_action" if fine else (action_name(chunk[i]) if isinstance(chunk[i], dict) else None)
    trace.emit("safety_refusal", arm=arm, command=name, reason=message)
    stats.actions += 1
    stats.failed_actions += 1
    history.append(TurnRecord([], [f"Action failed: {message}"]))
    return True


def _record(trace: TraceWriter, action: Any, result: SkillResult, fine: bool) -> None:
    if fine:
        trace.emit(
            "actor_command",
            arm="both",
            skill="execute_ee_action",
            args=list(action) if isinstance(action, list) else action,
            ok=result.ok,
            message=result.message,
        )
        return
    params = action.get("parameters", {}) if isinstance(action, dict) else {}
    arm = params.get("arm_tag") if isinstance(params, dict) else None
    name = action_name(action) if isinstance(action, dict) else None
    trace.emit("actor_command", arm=arm, skill=name, args=params, ok=result.ok, message=result.message)
