"""The benchmark's episode loops: Tier 1 answering, Tier 2 turns with chunks, Tier 3 EE-action turns.

A turn's chunk is checked whole (every argument of every action) before its first action runs.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from mallvi.bench.actions import action_name, chunk_problem, execute_action, execute_ee_action
from mallvi.bench.agents.agent_protocols import EpisodeStats, GroundingAnswerer, Planner, TurnRecord
from mallvi.bench.tasks.grounding import GroundingTask
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld
from mallvi.contracts.skills import FailureKind, SkillResult
from mallvi.tracing.trace import TraceWriter

HISTORY_TURNS = 3
#: Tier 3 keeps going past the turn limit while at most this many actions have run (up to 1.5× the limit)
FINE_MIN_ACTIONS = 12
#: failures that are a failed motion plan (no IK solution, no path), by their kind
PLAN_FAILURE_KINDS = frozenset({FailureKind.UNREACHABLE, FailureKind.NO_PLAN})
#: actions that still act in a frozen episode (they move nothing)
_FROZEN_STILL_RUN = frozenset({"get_arm_pose"})


def is_plan_failure(result: SkillResult) -> bool:
    """Whether a failed action failed because no motion could be planned."""
    return not result.ok and result.kind in PLAN_FAILURE_KINDS


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


def run_planning(
    task: BenchTask, world: BenchWorld, planner: Planner, trace: TraceWriter, freeze_after_plan_failure: bool = False
) -> EpisodeStats:
    """Tier 2: each turn one plan, only its first ``chunk`` actions run; stop at success or the turn limit.

    ``freeze_after_plan_failure`` is the original benchmark's behaviour ("paper" mode): the action whose motion
    could not be planned is reported as succeeded, and from then on every action reports success and moves
    nothing. The trace records what really happened (``frozen`` on each such command).
    """
    stats = EpisodeStats()
    if freeze_after_plan_failure:
        stats.extra["frozen_at_action"] = None
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
        result = execute_ee_action(world, action) if fine else _execute(task, world, action, stats, trace)
        if fine:
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
    whole chunk (nothing moves, one failed action, the planner is told which action and why). True if refused.
    A frozen episode (paper mode) moves nothing anyway and is not checked."""
    if stats.extra.get("frozen_at_action") is not None:
        return False
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


def _execute(task: BenchTask, world: BenchWorld, action: Any, stats: EpisodeStats, trace: TraceWriter) -> SkillResult:
    """One Tier 2 action, frozen as the original's when the episode is in paper mode (``frozen_at_action`` set)."""
    freezing = "frozen_at_action" in stats.extra
    if freezing and stats.extra["frozen_at_action"] is not None:
        name = action_name(action) if isinstance(action, dict) else None
        if name not in _FROZEN_STILL_RUN:
            _record(trace, action, SkillResult.success(), False, frozen=True)
            return SkillResult.success()
    result = execute_action(task, world, action)
    _record(trace, action, result, False)
    if freezing and is_plan_failure(result):
        stats.extra["frozen_at_action"] = stats.actions
        trace.emit("error", where="bench.freeze", message=f"motion plan failed ({result.message}); reported as "
                   "succeeded and every later motion of the episode does nothing, as in the original benchmark")
        return SkillResult.success()
    return result


def _record(trace: TraceWriter, action: Any, result: SkillResult, fine: bool, frozen: bool = False) -> None:
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
    if frozen:
        trace.emit("actor_command", arm=arm, skill=name, args=params, ok=True, message="frozen: nothing moved",
                   frozen=True)  # fmt: skip
        return
    trace.emit("actor_command", arm=arm, skill=name, args=params, ok=result.ok, message=result.message)
