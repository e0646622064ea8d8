"""Tolerant reading of JSON and JSON-lines files that may be damaged, hostile or still being written.

One bad line never costs the others: each line is parsed on its own, and a line that is too long, not UTF-8,
nested too deep, holds a number too long to convert, or is not JSON is skipped and reported as a ``LineProblem``
(file line number and reason). Only regular files are opened (a FIFO or a device named like a results file would
block a reader forever), without blocking, and checked after opening.

    records, problems = read_jsonl_tolerant(path)
    value, problem = read_json_tolerant(path)
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

try:  # about twice as fast as the standard library on big lines; lines it refuses get the standard parser's word
    import orjson as _fast_json
except ImportError:  # pragma: no cover - orjson is a locked dependency
    _fast_json = None  # type: ignore[assignment]

#: the longest line read (bytes); a longer one is skipped and reported
MAX_LINE_BYTES = 64 * 1024 * 1024
#: the deepest nesting of lists and objects accepted in one value
MAX_DEPTH = 100
#: the largest whole JSON document (``read_json_tolerant``) and text file (``read_text_tolerant``) read
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
_READ_CHUNK = 1 << 20
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')  # a JSON string, escapes included
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_INNERMOST_PAIR = re.compile(rb"\[\]|\{\}")


class NotRegularFileError(OSError):
    """The path names a FIFO, a device, a socket or a folder, not a regular file."""


@dataclass(frozen=True)
class LineProblem:
    """A line (1-based; 0: the file as a whole) that was not read, and why."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}" if self.line else self.reason


def open_regular(path: str | Path) -> IO[bytes]:
    """Open ``path`` for binary reading only if it is a regular file (never blocks on a FIFO).

    Raises:
        NotRegularFileError: a FIFO, device, socket or folder.
        OSError: missing or unreadable.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(f"{path} is not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def parse_json_bytes(raw: bytes, max_depth: int = MAX_DEPTH) -> tuple[Any, str | None]:
    """One JSON value from ``raw`` (one line, or a whole document): ``(value, None)``, or ``(None, reason)``."""
    if raw.count(b"[") + raw.count(b"{") > max_depth and bracket_depth(raw, max_depth) > max_depth:
        return None, f"nested deeper than {max_depth} levels"
    if _fast_json is not None:
        try:
            return _fast_json.loads(raw), None
        except _fast_json.JSONDecodeError:
            pass  # e.g. NaN, which Python's json writes and reads: the standard parser decides, and says why not
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, f"not valid UTF-8 (byte {raw[e.start]:#04x} at offset {e.start})"
    try:
        value = json.loads(text)
    except RecursionError:
        return None, f"nested deeper than {max_depth} levels"
    except json.JSONDecodeError as e:
        return None, f"not JSON ({e.msg} at column {e.colno})"
    except ValueError as e:  # e.g. an integer of more than 4300 digits
        message = str(e)
        if "integer string conversion" in message:
            return None, "a number with more than 4300 digits"
        return None, f"not JSON ({message[:120]})"
    return value, None


def bracket_depth(raw: bytes, limit: int = MAX_DEPTH) -> int:
    """How deeply the lists and objects of JSON text nest (counted up to ``limit + 1``), without parsing it.

    Every innermost ``[]``/``{}`` pair of the text's brackets is removed at once, level by level (each pass a
    C-speed substitution, not a Python loop per bracket). Brackets inside strings are counted at first; only when
    that gives an unbalanced or too deep result are the strings dropped and the brackets counted again.
    """
    depth = _skeleton_depth(raw.translate(None, _NOT_BRACKETS), limit)
    if depth is None or depth > limit:
        depth = _skeleton_depth(_JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKETS), limit)
    return depth or 0


def _skeleton_depth(skeleton: bytes, limit: int) -> int | None:
    """The nesting depth of a string of brackets (up to ``limit + 1``), None when they do not balance."""
    depth = 0
    while skeleton and depth <= limit:
        reduced = _INNERMOST_PAIR.sub(b"", skeleton)
        if len(reduced) == len(skeleton):
            return None
        skeleton, depth = reduced, depth + 1
    return depth


@dataclass(frozen=True)
class RawLine:
    """One line of a file: where it starts, its bytes (None when over the length bound) and its number."""

    offset: int
    data: bytes | None
    number: int
    length: int  # bytes, the newline included
    complete: bool  # ended by a newline (False: the file's torn last line)


def iter_raw_lines(fh: IO[bytes], *, start_offset: int = 0, first_number: int = 1,
                   max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[RawLine]:
    """The lines of ``fh`` from ``start_offset``, read in bounded pieces (a long line is skipped, not held)."""
    fh.seek(start_offset)
    offset, number = start_offset, first_number
    while True:
        data = fh.readline(max_line_bytes + 1)
        if not data:
            return
        if len(data) > max_line_bytes and not data.endswith(b"\n"):
            length = len(data)
            complete = False
            while True:  # skip to the end of the over-long line
                piece = fh.readline(_READ_CHUNK)
                length += len(piece)
                if not piece:
                    break
                if piece.endswith(b"\n"):
                    complete = True
                    break
            yield RawLine(offset, None, number, length, complete)
        else:
            length = len(data)
            yield RawLine(offset, data, number, length, data.endswith(b"\n"))
        offset += length
        number += 1


def parse_line(line: RawLine, max_depth: int = MAX_DEPTH,
               max_line_bytes: int = MAX_LINE_BYTES) -> tuple[dict[str, Any] | None, LineProblem | None]:
    """A JSON-lines line as an object: ``(record, None)``, ``(None, None)`` for a blank line, else a problem."""
    if line.data is None:
        return None, LineProblem(line.number, f"longer than {max_line_bytes:,} bytes ({line.length:,})")
    if not line.data.strip():
        return None, None
    value, reason = parse_json_bytes(line.data, max_depth)
    if reason is not None:
        return None, LineProblem(line.number, reason)
    if not isinstance(value, dict):
        return None, LineProblem(line.number, f"a JSON {type(value).__name__}, not an object")
    return value, None


def read_jsonl_tolerant(path: str | Path, *, max_line_bytes: int = MAX_LINE_BYTES,
                        max_depth: int = MAX_DEPTH) -> tuple[list[dict[str, Any]], list[LineProblem]]:
    """Every JSON object of a JSON-lines file, and the lines that were skipped and why.

    A missing file gives ``([], [])``; a file that is not regular or cannot be read gives one problem (line 0).
    A last line without its newline (a writer killed mid-line) is reported as incomplete.
    """
    records: list[dict[str, Any]] = []
    problems: list[LineProblem] = []
    try:
        fh = open_regular(path)
    except FileNotFoundError:
        return records, problems
    except OSError as e:
        return records, [LineProblem(0, f"cannot read {Path(path).name}: {e.strerror or e}")]
    with fh:
        try:
            for line in iter_raw_lines(fh, max_line_bytes=max_line_bytes):
                if not line.complete and line.data is not None and line.data.strip():
                    problems.append(LineProblem(line.number, "incomplete last line (the writer stopped mid-line)"))
                    continue
                record, problem = parse_line(line, max_depth, max_line_bytes)
                if problem is not None:
                    problems.append(problem)
                elif record is not None:
                    records.append(record)
        except OSError as e:
            problems.append(LineProblem(0, f"reading stopped: {e.strerror or e}"))
    return records, problems


def read_bytes_bounded(path: str | Path, max_bytes: int = MAX_DOCUMENT_BYTES) -> tuple[bytes | None, str | None]:
    """A regular file's bytes, ``(data, None)``; ``(None, None)`` when missing; ``(None, reason)`` otherwise."""
    try:
        fh = open_regular(path)
    except FileNotFoundError:
        return None, None
    except OSError as e:
        return None, f"cannot read {Path(path).name}: {e.strerror or e}"
    with fh:
        try:
            data = fh.read(max_bytes + 1)
        except OSError as e:
            return None, f"cannot read {Path(path).name}: {e.strerror or e}"
    if len(data) > max_bytes:
        return None, f"{Path(path).name} is larger than {max_bytes:,} bytes"
    return data, None


def read_json_tolerant(path: str | Path, *, max_bytes: int = MAX_DOCUMENT_BYTES,
                       max_depth: int = MAX_DEPTH) -> tuple[Any, LineProblem | None]:
    """A whole JSON document: ``(value, None)``, ``(None, None)`` when missing, else ``(None, problem)``."""
    data, reason = read_bytes_bounded(path, max_bytes)
    if data is None:
        return None, LineProblem(0, reason) if reason else None
    value, reason = parse_json_bytes(data, max_depth)
    return value, LineProblem(0, f"{Path(path).name}: {reason}") if reason else None


def read_text_tolerant(path: str | Path, max_bytes: int = MAX_DOCUMENT_BYTES) -> tuple[str | None, str | None]:
    """A text file (invalid UTF-8 shown as U+FFFD): ``(text, None)``, ``(None, None)`` if missing, else a reason."""
    data, reason = read_bytes_bounded(path, max_bytes)
    if data is None:
        return None, reason
    return data.decode("utf-8", errors="replace"), None
