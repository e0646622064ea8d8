"""How the viewer reads the files of a bench folder: every JSON, JSON-lines and text file goes through here.

Tolerant of damaged and hostile files (``mallvi.tracing.jsonl``): only regular files are opened (a FIFO named
``results.json`` never blocks a request), a bad line is skipped and reported, and nothing raises.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from mallvi.tracing.jsonl import LineProblem, read_json_tolerant, read_jsonl_tolerant, read_text_tolerant

log = logging.getLogger(__name__)


def read_records(path: Path) -> tuple[list[dict[str, Any]], list[LineProblem]]:
    """The JSON objects of a JSON-lines file, and the lines that were skipped and why (logged)."""
    records, problems = read_jsonl_tolerant(path)
    for problem in problems:
        log.warning("%s: skipping %s", path, problem)
    return records, problems


def read_document(path: Path) -> tuple[Any, LineProblem | None]:
    """A JSON file's content (None when missing or unreadable) and what was wrong with it (logged)."""
    value, problem = read_json_tolerant(path)
    if problem is not None:
        log.warning("cannot read %s: %s", path, problem)
    return value, problem


def read_text(path: Path) -> str | None:
    """A text file (invalid UTF-8 shown as U+FFFD), or None when missing or not a readable regular file."""
    text, reason = read_text_tolerant(path)
    if reason is not None:
        log.warning("cannot read %s: %s", path, reason)
    return text
