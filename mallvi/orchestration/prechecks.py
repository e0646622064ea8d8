"""Checks a run's inputs must pass before anything is built: the checkpoint file and, with the rules Decomposer,
the instruction itself (refused by the grammar before any world exists)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from mallvi.config import RunConfig

_SQLITE_MAGIC = b"SQLite format 3\x00"


def check_checkpoint(path: str | Path, resume_thread: str | None) -> None:
    """Refuse a checkpoint that is a folder, lies under a file or is not an SQLite file, and a ``--resume`` whose
    thread it does not hold (ValueError with what to do instead); a missing file is fine for a new run."""
    file = Path(path)
    if file.is_dir():
        raise ValueError(f"--checkpoint {file} is a folder; give the SQLite file to use")
    if not file.exists():
        if any(p.exists() and not p.is_dir() for p in file.parents):
            raise ValueError(f"--checkpoint {file} cannot be created: a parent of it is a file")
        if resume_thread is not None:
            raise ValueError(f"--resume {resume_thread}: there is no checkpoint at {file}; give the paused run's "
                             "--trace-dir or --checkpoint")
        return
    try:
        with open(file, "rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as e:
        raise ValueError(f"--checkpoint {file} cannot be read: {e.strerror or e}") from e
    if head and head != _SQLITE_MAGIC:
        raise ValueError(f"--checkpoint {file} is not an SQLite checkpoint file")
    if resume_thread is not None and not _has_thread(file, resume_thread):
        raise ValueError(f"--resume {resume_thread}: no paused run with that id in {file}")


def _has_thread(file: Path, thread_id: str) -> bool:
    try:
        with contextlib.closing(sqlite3.connect(f"file:{file}?mode=ro", uri=True)) as conn:
            row = conn.execute("SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1", (thread_id,)).fetchone()
    except sqlite3.Error:  # damaged, or no checkpoints table yet
        return False
    return row is not None


def precheck_instruction(instruction: str | None, cfg: RunConfig) -> None:
    """Refuse an instruction the rules grammar cannot parse before any world is built (exit 2, nothing moves)."""
    if instruction is None or cfg.backend_of("decomposer") != "rules":
        return
    from mallvi.graph.backends.rules.grammar.parser import parse_instruction

    parse_instruction(instruction)  # raises RefusalError
