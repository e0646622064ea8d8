"""Find the runs under a viewer's root folder and keep one incremental reader per run.

The root may be one trace directory, a folder of trace directories, or a ``mallvi bench`` output folder
(``results.json``, ``episodes.jsonl``, ``table.md`` and ``traces/<episode>/``), or a folder of those.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from mallvi.logviz.reader import RunSummary, TraceReader

log = logging.getLogger(__name__)

MAX_DEPTH = 4
BENCH_MARKERS = ("results.json", "episodes.jsonl")


class RootNotFoundError(ValueError):
    """The viewer's root is not a folder holding traces or benchmark output."""


class RunCatalog:
    """Runs (by key: their path relative to the root, "." for the root itself) and benchmark folders."""

    def __init__(self, root: str | Path, rescan_s: float = 2.0):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise RootNotFoundError(f"{root} is not a directory")
        self.rescan_s = rescan_s
        self._lock = threading.Lock()
        self._readers: dict[str, TraceReader] = {}
        self._benches: list[str] = []
        self._scanned_at = -1e9
        self.scan(force=True)

    def scan(self, force: bool = False) -> None:
        """Look for new trace directories and benchmark folders (at most every ``rescan_s`` seconds)."""
        with self._lock:
            now = time.monotonic()
            if not force and now - self._scanned_at < self.rescan_s:
                return
            self._scanned_at = now
            traces, benches = _walk(self.root)
            for directory in traces:
                key = self.key_of(directory)
                if key not in self._readers:
                    self._readers[key] = TraceReader(directory)
            self._benches = sorted(self.key_of(d) for d in benches)

    def key_of(self, directory: Path) -> str:
        return directory.resolve().relative_to(self.root).as_posix()

    def keys(self) -> list[str]:
        """Every run's key (rescans first when the last scan is older than ``rescan_s``)."""
        self.scan()
        with self._lock:
            return sorted(self._readers)

    @property
    def bench_keys(self) -> list[str]:
        with self._lock:
            return list(self._benches)

    def run(self, key: str) -> RunSummary | None:
        """The up-to-date summary of one run (reads what was appended since last time); None if unknown."""
        with self._lock:
            reader = self._readers.get(key)
        if reader is None:
            return None
        reader.refresh()
        return reader.summary()

    def runs(self) -> list[tuple[str, RunSummary]]:
        """Every run, refreshed, newest first."""
        self.scan()
        out = [(key, summary) for key in self.keys() if (summary := self.run(key)) is not None]
        out.sort(key=lambda item: item[1].t_start or 0.0, reverse=True)
        return out

    def signature(self) -> tuple[int, ...]:
        """Changes whenever any run has new events (cheap: no parsing)."""
        self.scan()
        with self._lock:
            readers = list(self._readers.values())
        return tuple(_size(r.path) for r in readers)

    def bench_dir(self, key: str) -> Path | None:
        with self._lock:
            if key not in self._benches:
                return None
        return self.root / key


def read_json(path: Path) -> Any:
    """A JSON file's content, or None (logged) when missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        log.warning("cannot read %s: %s", path, e)
        return None


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file; corrupt or torn lines are skipped."""
    out: list[dict[str, Any]] = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return out
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


def _walk(root: Path) -> tuple[list[Path], list[Path]]:
    """Trace directories and benchmark folders up to ``MAX_DEPTH`` below ``root``.

    A trace directory is not searched further (it only holds artifacts), so a scan costs one directory
    listing per folder above the traces.
    """
    traces: list[Path] = []
    benches: list[Path] = []
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        directory, depth = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        names = {e.name for e in entries if e.is_file()}
        if any(m in names for m in BENCH_MARKERS):
            benches.append(directory)
        if "events.jsonl" in names:
            traces.append(directory)
            continue
        if depth < MAX_DEPTH:
            stack.extend((Path(e.path), depth + 1) for e in entries if e.is_dir() and not e.name.startswith("."))
    return traces, benches


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1
