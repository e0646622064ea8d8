"""Find the runs under a viewer's root folder and keep one incremental reader per run.

The root may be one trace directory, a folder of trace directories, or a ``mallvi bench`` output folder
(``results.json``, ``episodes.jsonl``, ``table.md`` and ``traces/<episode>/``), or a folder of those. A trace
directory that was reused holds later runs in subfolders (``run-2/``, ...), which are found too. Links that
lead outside the root are skipped with a warning: the viewer shows nothing from outside its folder.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

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
        self._warned: set[str] = set()  # links outside the root already warned about (once each)
        self._scanned_at = -1e9
        self.scan(force=True)

    def scan(self, force: bool = False) -> None:
        """Look for new trace directories and benchmark folders (at most every ``rescan_s`` seconds)."""
        with self._lock:
            now = time.monotonic()
            if not force and now - self._scanned_at < self.rescan_s:
                return
            self._scanned_at = now
            traces, benches = _walk(self.root, self._warned)
            for directory in traces:
                try:
                    key = self.key_of(directory)
                except ValueError:  # replaced by a link that leaves the root since it was listed
                    continue
                if key not in self._readers:
                    self._readers[key] = TraceReader(directory)
            self._benches = sorted(k for d in benches if (k := self._key_or_none(d)) is not None)

    def key_of(self, directory: Path) -> str:
        return directory.resolve().relative_to(self.root).as_posix()

    def _key_or_none(self, directory: Path) -> str | None:
        try:
            return self.key_of(directory)
        except ValueError:
            return None

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
        try:
            reader.refresh()
            return reader.summary()
        except Exception as e:  # a trace the reader does not foresee must not take the other runs down with it
            log.warning("cannot read the trace in %s: %s: %s", reader.dir, type(e).__name__, e)
            return RunSummary(directory=reader.dir, outcome="unreadable", status=f"{type(e).__name__}: {e}"[:200])

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


def _walk(root: Path, warned: set[str]) -> tuple[list[Path], list[Path]]:
    """Trace directories and benchmark folders up to ``MAX_DEPTH`` below ``root`` (itself resolved).

    A trace directory's ``artifacts/`` is not searched (it only holds images), so a scan costs one directory
    listing per folder. A link (to a folder or to an events file) that resolves outside ``root`` is skipped and
    logged once, by its path in ``warned``.
    """
    traces: list[Path] = []
    benches: list[Path] = []
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        directory, depth = stack.pop()
        try:
            entries = [e for e in os.scandir(directory) if _inside(e, root, warned)]
        except OSError:
            continue
        names = {e.name for e in entries if _is_file(e)}
        if any(m in names for m in BENCH_MARKERS):
            benches.append(directory)
        is_trace = "events.jsonl" in names
        if is_trace:
            traces.append(directory)
        if depth < MAX_DEPTH:
            stack.extend((Path(e.path), depth + 1) for e in entries
                         if _is_dir(e) and not e.name.startswith(".") and not (is_trace and e.name == "artifacts"))
    return traces, benches


def _inside(entry: os.DirEntry[str], root: Path, warned: set[str]) -> bool:
    """Whether an entry stays inside ``root`` (a link is followed; a broken one is dropped quietly)."""
    try:
        if not entry.is_symlink():
            return True
        target = Path(entry.path).resolve(strict=True)
    except (OSError, RuntimeError):  # a dangling link or a loop
        return False
    if target == root or root in target.parents:
        return True
    if entry.path not in warned:
        warned.add(entry.path)
        log.warning("skipping %s: it links to %s, outside %s", entry.path, target, root)
    return False


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1
