"""The single agent's episode loops under the paper protocol: the original benchmark's evaluation scripts
(``myvlmEb_eval.py`` for Tier 2, ``myvlmEb_eval_vla.py`` for Tier 3) on our world.

Per turn: one model call; its plan cut to the task's chunk; the chunk's arguments checked whole before its first
action (mallvi's safety rule: a malformed value in an action it can read refuses the chunk, "Action failed: the plan
was refused ..."; the original would run the actions before it; an action it cannot read is answered in its own
words when its turn comes, as there); each action run (``paper_actions``) and answered with
the original's line ("Action succeeded.", "Action failed: ...", "Invalid action format: ..."); an unusable reply
gets "Action is empty, ...". Tier 2 checks success after every succeeded action and after the turn; the first
failed action (or ``get_arm_pose``, whose pose the original reports as a failure) ends the chunk; a failed motion
plan freezes the episode (``paper_actions``). Tier 3 runs while (turn < limit or succeeded actions <= 12) and
turn < ceil(1.5 * limit); its success is checked every physics step (``paper_skills.ee_action``).

The trace records what really happened (each command's real outcome, ``frozen`` where nothing ran), and the
line the model was given (``reported``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from mallvi.bench.actions import ee_action_problem, execute_ee_action
from mallvi.bench.agents.agent_protocols import EpisodeStats, Planner, TurnRecord
from mallvi.bench.agents.single_paper_prompt import EMPTY_FEEDBACK, HISTORY_TURNS
from mallvi.bench.paper_actions import Outcome, chunk_argument_problem, parse_ee_item, run_action
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld
from mallvi.tracing.trace import TraceWriter

#: Tier 3 keeps going past the turn limit while at most this many actions have succeeded (up to 1.5× the limit)
FINE_MIN_ACTIONS = 12


def chunk_of(plan: Any, chunk: int) -> Any:
    """The plan as the original cuts it: a list (or text) to its first ``chunk`` items; anything else as it is."""
    if isinstance(plan, list | str) and plan:
        return plan[:chunk]
    return plan


def _items(chunk: Any) -> list[Any]:
    """What the original's loop iterates over: a list's items, a text's characters, a lone object once."""
    if isinstance(chunk, list | str):
        return list(chunk)
    return [chunk] if chunk else []


def _turn(planner: Planner, task: BenchTask, world: BenchWorld, history: Sequence[TurnRecord], turn: int,
          stats: EpisodeStats, trace: TraceWriter) -> Any:  # fmt: skip
    """One model call; the plan it gave, cut to the chunk ({} for an unusable reply)."""
    reply = planner.plan(task, world, list(history[-HISTORY_TURNS:]), turn)
    if reply.error is not None:
        stats.parse_errors += 1
        trace.emit("error", where="planner", message=f"turn {turn}: {reply.error}")
        return {}
    return chunk_of(reply.plan if reply.plan is not None else reply.actions, task.chunk)


def run_planning_paper(task: BenchTask, world: BenchWorld, planner: Planner, trace: TraceWriter) -> EpisodeStats:
    """Tier 2 as the original's evaluation runs it (see the module docstring)."""
    stats = EpisodeStats()
    stats.extra["frozen_at_action"] = None
    history: list[TurnRecord] = []
    frozen = False
    planner.reset(task, world)
    for turn in range(task.max_turns):
        stats.turns += 1
        chunk = _turn(planner, task, world, history, turn, stats, trace)
        items = _items(chunk)
        lines: list[str] = [] if items else [EMPTY_FEEDBACK]
        bad = chunk_argument_problem(task, world, items)
        if bad is not None:  # mallvi's safety rule over the original's: nothing of a malformed chunk runs
            i, why = bad
            message = f"the plan was refused before its first action: action {i + 1} of {len(items)}: {why}"
            trace.emit("safety_refusal", arm=(items[i].get("parameters") or {}).get("arm_tag"),
                       command=items[i].get("action_name"), reason=message)
            stats.actions += 1
            stats.failed_actions += 1
            lines = [f"Action failed: {message}\n"]
        for item in items if bad is None else []:
            if not isinstance(item, dict):
                lines.append(f"Invalid action format: {item}\n")
                continue
            outcome = run_action(task, world, item, frozen)
            _record(trace, item, outcome, frozen)
            stats.actions += 1
            if outcome.froze and not frozen:
                frozen = True
                stats.extra["frozen_at_action"] = stats.actions - 1
                trace.emit("error", where="bench.freeze", message="a motion could not be planned; as the original "
                           "benchmark, it is reported as succeeded and every later motion of the episode does nothing")
            lines.append(outcome.feedback)
            if not outcome.succeeded:
                if not outcome.query:
                    stats.failed_actions += 1
                    stats.refusals += int(outcome.refused)
                break
            if task.check_success(world):
                break
        history.append(TurnRecord(items, lines, index=turn, listed=str(chunk)))
        if task.check_success(world):
            break
    return stats


def run_fine_paper(task: BenchTask, world: BenchWorld, planner: Planner, trace: TraceWriter) -> EpisodeStats:
    """Tier 3 as the original's evaluation runs it (see the module docstring)."""
    stats = EpisodeStats()
    history: list[TurnRecord] = []
    planner.reset(task, world)
    limit, turn, succeeded_actions = task.max_turns, 0, 0
    while (turn < limit or succeeded_actions <= FINE_MIN_ACTIONS) and turn < math.ceil(1.5 * limit):
        stats.turns += 1
        chunk = _turn(planner, task, world, history, turn, stats, trace)
        items = _items(chunk)
        lines: list[str] = [] if items else [EMPTY_FEEDBACK]
        bad = _malformed_ee_chunk(items)
        if bad is not None:  # mallvi's safety rule over the original's: nothing of a malformed chunk runs
            i, why = bad
            message = f"the plan was refused before its first action: action {i + 1} of {len(items)}: {why}"
            trace.emit("safety_refusal", arm="both", command="execute_ee_action", reason=message)
            stats.failed_actions += 1
            lines.append(f"Action failed: {message}\n")
        for item in items if bad is None else []:
            values, error = parse_ee_item(item)
            if values is None:
                lines.append(f"Action failed: {error}\n")
                stats.failed_actions += 1
                trace.emit("actor_command", arm="both", skill="execute_ee_action", args=_plain(item), ok=False,
                           message=error, reported=lines[-1].strip())  # fmt: skip
                break
            result = execute_ee_action(world, values, semantics="paper", task=task)
            stats.actions += 1
            line = "Action succeeded.\n" if result.ok else f"Action failed: {result.message}\n"
            lines.append(line)
            trace.emit("actor_command", arm="both", skill="execute_ee_action", args=_plain(values), ok=result.ok,
                       message=result.message, stayed=result.data.get("stayed"), reported=line.strip())  # fmt: skip
            if not result.ok:
                stats.failed_actions += 1
                break
            succeeded_actions += 1
            if result.data.get("succeeded"):  # the original stops the motion there; later actions do nothing
                break
        history.append(TurnRecord(items, lines, index=turn, listed=str(chunk)))
        if task.check_success(world):
            break
        turn += 1
    return stats


def _malformed_ee_chunk(items: list[Any]) -> tuple[int, str] | None:
    """The first Tier 3 action of a chunk whose numbers are malformed (a zero quaternion, a gripper opening out of
    range; an arm given as NaN stays, as the original's), and why; None when every action is sound. An action
    the original cannot read at all is answered in its own words when its turn comes, as there."""
    for i, item in enumerate(items):
        values, _ = parse_ee_item(item)
        if values is None:
            continue
        bad = ee_action_problem(values, still_arms=True)
        if bad is not None:
            return i, bad.message
    return None


def _plain(value: Any) -> Any:
    """A value for the trace (JSON): NaN and infinities as None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value if isinstance(value, str | int | dict) or value is None else str(value)


def _record(trace: TraceWriter, action: dict[str, Any], outcome: Outcome, was_frozen: bool) -> None:
    """The action's real outcome (skills run, or nothing because the episode was frozen) and what was reported."""
    params = action.get("parameters")
    params = params if isinstance(params, dict) else {}
    failed = [r for r in outcome.results if not r.ok]
    ran_nothing = was_frozen and not outcome.results
    if failed:
        ok, message = False, "; ".join(r.message for r in failed)
    elif outcome.results or ran_nothing:
        ok, message = True, "frozen: nothing moved" if ran_nothing else "Action succeeded."
    else:  # refused before any skill ran (format, names, refusals) or answered from the pose
        ok, message = outcome.query, outcome.feedback.strip()
    trace.emit("actor_command", arm=params.get("arm_tag"), skill=action.get("action_name"), args=_plain(params),
               ok=ok, message=message, reported=outcome.feedback.strip(),
               **({"frozen": True} if ran_nothing and outcome.succeeded else {}))  # fmt: skip
