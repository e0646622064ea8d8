"""The episode records of a bench folder (``episodes.jsonl``): read tolerantly, and only a run's own counted.

A record counts for a run when it is whole and well-formed, belongs to the run's agent, tier and tasks, has a
seed in the run's range, and is the first record of its task and seed. Anything else is left in the file, not
counted, and named in a warning with file and line, so a resumed run runs every seed it still needs and its score
is over its own episodes only.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mallvi.bench.tiers import TIER_TASKS, TierName
from mallvi.tracing.tolerant_json import iter_jsonl

log = logging.getLogger(__name__)

#: seeds are 32-bit (numpy's generators and the scene builders take them modulo nothing)
SEED_LIMIT = 2**32
#: the statuses an episode record can have
STATUSES = ("done", "skipped", "error")


@dataclass(frozen=True)
class RecordScope:
    """What a run's own records look like: its tier, tasks, agent and first seed."""

    tier: TierName
    tasks: tuple[str, ...]
    agent: str
    seed_start: int


def record_problem(record: Any) -> str | None:
    """Why ``record`` is not an episode record (None when it is one)."""
    if not isinstance(record, dict):
        return "is not a JSON object"
    if not isinstance(record.get("task"), str):
        return "has no task name"
    seed = record.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool):
        return "has no integer seed"
    if record.get("status") not in STATUSES:
        return f"has no status ({', '.join(STATUSES)})"
    if record["status"] != "skipped" and not isinstance(record.get("success"), bool):
        return "has no true/false success"
    return None


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every well-formed record of ``path`` (an episodes.jsonl), in file order; [] when the file does not exist.

    A torn last line (a killed writer) is ignored; a damaged line elsewhere (not JSON, not an episode record,
    too long, too deep, a number of thousands of digits, invalid UTF-8) is skipped with a warning that names the
    file and line.
    """
    return [rec for _, rec in _numbered_records(path)]


def own_records(path: Path, scope: RecordScope) -> list[dict[str, Any]]:
    """The records of ``path`` that are ``scope``'s run's own, in file order; each other one is warned about.

    Not counted (with a warning naming file and line): a record of another agent or tier, of a task the tier does
    not have, with a seed below the run's first seed or past the largest one, or repeating a task and seed an
    earlier line already has. Records of the tier's other tasks are the folder's too (a run with another
    ``--tasks``): they are left out silently.
    """
    seen: dict[tuple[str, int], int] = {}
    out = []
    tier_tasks = TIER_TASKS.get(scope.tier, ())
    for line, rec in _numbered_records(path):
        task, seed = rec["task"], int(rec["seed"])
        why = None
        if rec.get("agent") not in (None, scope.agent):
            why = f"is an episode of agent {rec.get('agent')!r}, not {scope.agent!r}"
        elif rec.get("tier") not in (None, scope.tier):
            why = f"is an episode of tier {rec.get('tier')!r}, not {scope.tier!r}"
        elif task not in tier_tasks:
            why = f"is an episode of {task!r}, which is not a task of tier {scope.tier!r}"
        elif seed < scope.seed_start:
            why = f"has seed {seed}, below this run's first seed {scope.seed_start}"
        elif seed >= SEED_LIMIT:
            why = f"has seed {seed}, past the largest seed {SEED_LIMIT - 1}"
        elif (task, seed) in seen:
            why = f"repeats {task} seed {seed} (first at line {seen[task, seed]})"
        if why is not None:
            log.warning("%s line %d %s; not counted", path, line, why)
            continue
        seen[task, seed] = line
        if task in scope.tasks:
            out.append(rec)
    return out


def _numbered_records(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    if not path.exists():
        return
    for item in iter_jsonl(path):
        if item.torn:
            continue  # the last line of a killed writer: ``drop_torn_tail`` cuts it before the next append
        if item.problem is not None:
            log.warning("%s line %d is not a JSON record (%s); its episode will run again", path, item.line,
                        item.problem)
            continue
        problem = record_problem(item.value)
        if problem is not None:
            log.warning("%s line %d %s, so it is not an episode record; its episode will run again", path,
                        item.line, problem)
            continue
        yield item.line, item.value


def is_regular_or_missing(path: Path) -> bool:
    """Whether ``path`` is a regular file or does not exist (a FIFO or a device must not be opened)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True


def drop_torn_tail(path: Path) -> int:
    """Cut a last line without its newline (left by a kill mid-write) so that appends start on a fresh line;
    returns how many bytes were dropped."""
    try:
        with open(path, "rb+") as fh:
            size = fh.seek(0, os.SEEK_END)
            keep = size
            while keep > 0:  # find the last newline reading backwards in bounded pieces
                start = max(0, keep - (1 << 16))
                fh.seek(start)
                piece = fh.read(keep - start)
                at = piece.rfind(b"\n")
                if at >= 0:
                    keep = start + at + 1
                    break
                keep = start
            if keep == size:
                return 0
            fh.truncate(keep)
    except FileNotFoundError:
        return 0
    log.warning("%s ended in a torn line (%d bytes, from an interrupted run); dropped it", path, size - keep)
    return size - keep
