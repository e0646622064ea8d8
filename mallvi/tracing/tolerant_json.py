"""Reading JSON and JSON-lines files that may be damaged or hostile, without hanging, exhausting memory or raising
anything but a typed error that names the file and line.

Every bench folder and trace file goes through here: ``iter_jsonl`` yields one ``JsonLine`` per line (its value,
or the problem with it), ``load_json_file`` parses a whole JSON file or raises ``JsonFileError``. The limits
(``JsonLimits``): a line's length in bytes, the nesting depth, the digits of a number (Python refuses to convert
integers of more than 4,300 digits, and a long one is never a value mallvi wrote), strict UTF-8. Only regular
files are opened: a FIFO or a device named like a bench file is refused at once instead of blocking the reader.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO


@dataclass(frozen=True)
class JsonLimits:
    """What a line or file may hold: bytes per line, nesting levels, digits per number, bytes per whole file."""

    max_line_bytes: int = 8 * 1024 * 1024
    max_depth: int = 64
    max_number_digits: int = 64
    max_file_bytes: int = 64 * 1024 * 1024


DEFAULT_LIMITS = JsonLimits()


class JsonLimitError(ValueError):
    """A JSON text that is not valid or breaks a limit; ``pos`` is the character offset where it was found."""

    def __init__(self, reason: str, pos: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.pos = pos


class JsonFileError(ValueError):
    """A JSON or JSON-lines file that cannot be read as such; the message names the file and, where known, the line."""

    def __init__(self, path: Path, reason: str, line: int | None = None) -> None:
        where = f"{path} line {line}" if line is not None else str(path)
        super().__init__(f"{where}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


@dataclass(frozen=True)
class JsonLine:
    """One line of a JSON-lines file: its number (from 1), its value, or why it has none.

    ``torn`` marks a last line without its newline (a writer killed mid-line): the caller usually ignores it.
    """

    line: int
    value: Any = None
    problem: str | None = None
    torn: bool = False

    @property
    def ok(self) -> bool:
        return self.problem is None


def open_regular(path: str | Path) -> BinaryIO:
    """Open ``path`` for reading in binary mode if it is a regular file; ``JsonFileError`` otherwise.

    Opened without blocking, so a FIFO named like a data file is refused instead of waiting for a writer forever.
    Raises ``FileNotFoundError`` (an ``OSError``) when the path does not exist.
    """
    p = Path(path)
    fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise JsonFileError(p, "not a regular file")
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return fh


_PATTERNS: dict[int, tuple[re.Pattern[str], re.Pattern[str]]] = {}


def _patterns(max_digits: int) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(a run of digits longer than allowed, the scanner's tokens: a string skipped whole, a bracket, such a run)."""
    if max_digits not in _PATTERNS:
        long_number = "[0-9]{" + str(max_digits + 1) + ",}"
        _PATTERNS[max_digits] = (re.compile(long_number),
                                 re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{]|[\]}]|' + long_number))
    return _PATTERNS[max_digits]


def _check_shape(text: str, limits: JsonLimits) -> None:
    """JsonLimitError when ``text`` nests deeper than allowed or holds a number with too many digits.

    A quick bound first (every bracket counted, strings included); the exact scan only when that bound is exceeded.
    """
    long_number, pattern = _patterns(limits.max_number_digits)
    if text.count("[") + text.count("{") <= limits.max_depth and not long_number.search(text):
        return
    depth = 0
    for m in pattern.finditer(text):
        c = text[m.start()]
        if c == '"':
            continue
        if c in "[{":
            depth += 1
            if depth > limits.max_depth:
                raise JsonLimitError(f"nested deeper than {limits.max_depth} levels", m.start())
        elif c in "]}":
            depth -= 1
        else:
            raise JsonLimitError(f"a number of {len(m.group())} digits (at most {limits.max_number_digits} are "
                                 "accepted)", m.start())


def parse_json(data: str | bytes, limits: JsonLimits = DEFAULT_LIMITS) -> Any:
    """One JSON value from ``data`` within ``limits``; ``JsonLimitError`` (a ValueError) says what is wrong.

    NaN and Infinity are accepted, as Python's ``json`` writes them; callers that must not pass them on check.
    """
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise JsonLimitError(f"not valid UTF-8 (byte {e.start})", len(data[: e.start].decode("utf-8", "replace"))
                                 ) from None
    else:
        text = data
    _check_shape(text, limits)

    def bounded_int(digits: str) -> int:
        if len(digits.lstrip("-")) > limits.max_number_digits:
            raise JsonLimitError(f"a number of {len(digits)} digits")
        return int(digits)

    try:
        return json.loads(text, parse_int=bounded_int)
    except json.JSONDecodeError as e:
        raise JsonLimitError(f"not valid JSON: {e.msg}", e.pos) from None
    except RecursionError:
        raise JsonLimitError("nested too deeply to read") from None
    except JsonLimitError:
        raise
    except ValueError as e:  # e.g. a number Python will not convert
        raise JsonLimitError(f"not readable: {e}") from None


def _line_of(text: str, pos: int | None) -> int | None:
    return None if pos is None else text.count("\n", 0, pos) + 1


def iter_jsonl(path: str | Path, limits: JsonLimits = DEFAULT_LIMITS) -> Iterator[JsonLine]:
    """Every line of a JSON-lines file as a ``JsonLine``: its value, or the problem with it (blank lines skipped).

    A line longer than ``limits.max_line_bytes`` is reported and skipped without being held in memory. A last line
    without its newline is yielded with ``torn=True`` (its value parsed if it parses). Raises ``JsonFileError`` for
    a path that is not a regular file and ``OSError`` when it cannot be opened.
    """
    p = Path(path)
    with open_regular(p) as fh:
        lineno = 0
        while True:
            raw, ended, too_long = _read_line(fh, limits.max_line_bytes)
            if raw is None:
                return
            lineno += 1
            if too_long:
                yield JsonLine(lineno, problem=f"longer than {limits.max_line_bytes:,} bytes", torn=not ended)
                continue
            if not raw.strip():
                continue
            try:
                value = parse_json(raw.rstrip(b"\r"), limits)
            except JsonLimitError as e:
                yield JsonLine(lineno, problem=e.reason, torn=not ended)
            else:
                yield JsonLine(lineno, value=value, torn=not ended)


#: a line is read in pieces of this many bytes, so a line over the limit costs at most the limit and one piece
_PIECE_BYTES = 1 << 20


def _read_line(fh: BinaryIO, max_bytes: int) -> tuple[bytes | None, bool, bool]:
    """(the next line without its newline or None at the end of the file, whether it ended in a newline, whether it
    was longer than ``max_bytes``: then its bytes are skipped, not returned)."""
    buf = bytearray()
    while True:
        piece = fh.readline(_PIECE_BYTES)
        if not piece:
            return (bytes(buf) if buf else None), False, False
        if len(buf) + len(piece) - piece.endswith(b"\n") > max_bytes:
            buf.clear()
            ended = piece.endswith(b"\n")
            while not ended:  # skip the rest of the line
                piece = fh.readline(_PIECE_BYTES)
                if not piece:
                    break
                ended = piece.endswith(b"\n")
            return b"", ended, True
        if piece.endswith(b"\n"):
            buf += piece[:-1]
            return bytes(buf), True, False
        buf += piece


def load_json_file(path: str | Path, limits: JsonLimits = DEFAULT_LIMITS) -> Any:
    """The JSON value in ``path``; ``JsonFileError`` naming the file and line for anything that is not one.

    Raises ``FileNotFoundError`` when the file does not exist.
    """
    p = Path(path)
    with open_regular(p) as fh:
        data = fh.read(limits.max_file_bytes + 1)
    if len(data) > limits.max_file_bytes:
        raise JsonFileError(p, f"larger than {limits.max_file_bytes:,} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise JsonFileError(p, f"not valid UTF-8 (byte {e.start})", data.count(b"\n", 0, e.start) + 1) from None
    try:
        return parse_json(text, limits)
    except JsonLimitError as e:
        raise JsonFileError(p, e.reason, _line_of(text, e.pos)) from None


__all__ = ["DEFAULT_LIMITS", "JsonFileError", "JsonLimitError", "JsonLimits", "JsonLine", "iter_jsonl",
           "load_json_file", "open_regular", "parse_json"]
