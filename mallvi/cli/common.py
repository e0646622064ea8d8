"""What every command shares: exit codes, bad-input errors, the argument parser, safe printing, and the
process's output and interrupt handling (``command_process``).

Everything the CLI writes passes one redaction (``mallvi.tracing.redaction``): ``command_process`` puts it on
``sys.stdout``, ``sys.stderr`` and the log handlers, so no API key reaches the terminal, whoever prints it.
Text from a user, a model or a file is printed through ``safe`` (no escape sequences, no bidi or other format
controls, cut at ``MAX_PRINTED_CHARS`` with a note of how much was cut) and JSON through ``json_safe``.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import signal
import sys
import threading
import unicodedata
from collections.abc import Iterator
from types import FrameType
from typing import Any, TextIO

from mallvi.tracing.redaction import redact_text

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_UNAVAILABLE = 3
EXIT_PAUSED = 4
EXIT_INTERRUPTED = 130
EXIT_CODES = f"""exit codes:
  {EXIT_OK}    success (a dry run: planned, nothing moved)
  {EXIT_FAILED}    the task was carried out and failed (a failure report says why)
  {EXIT_BAD_INPUT}    bad input: a clear message on stderr, nothing was executed
  {EXIT_UNAVAILABLE}    a device or the model endpoint was unavailable: the rig or camera did not come up,
       the render device is missing (doctor), or the model server failed or gave no
       usable answer; try again when it is back
  {EXIT_PAUSED}    paused at an approval (run --approve): nothing failed; the last line says how to
       resume (--resume THREAD_ID)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)"""

#: text from a user, a model or a file longer than this is cut when printed (the trace keeps it whole)
MAX_PRINTED_CHARS = 2000
#: after Ctrl-C, the seconds a command has to unwind (stop the arms, close its files) before the process ends
INTERRUPT_GRACE_S = 5.0
#: Unicode categories never printed: format characters (bidi overrides and isolates such as U+202E, zero-width
#: characters, tags), line and paragraph separators, private-use and unassigned code points
_HIDDEN_CATEGORIES = frozenset({"Cf", "Zl", "Zp", "Co", "Cn", "Cs"})

#: ANSI escape sequences (CSI, OSC and two-character ones) and the other control characters but tab and newline
_TERMINAL_CONTROLS = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, screen clears
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window titles, hyperlinks
    r"|\x1b[@-_]?"  # other escapes, or a lone ESC
    r"|\x9b[0-?]*[ -/]*[@-~]"  # the one-byte CSI
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # the remaining C0 and C1 controls
)


class UsageError(Exception):
    """Bad input from the user: reported with exit code 2, nothing executed."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors exit with code 2 and print no terminal escapes."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("epilog", EXIT_CODES)
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"mallvi: error: {safe(message)}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def terminal_safe(text: str) -> str:
    """``text`` without escape sequences, control characters (tab and newline kept) or the characters that
    reorder or hide text on a terminal (bidi controls, zero-width and other format characters)."""
    text = _TERMINAL_CONTROLS.sub("", text)
    if text.isascii():
        return text
    return "".join(c for c in text if c.isascii() or unicodedata.category(c) not in _HIDDEN_CATEGORIES)


def cut(text: str, limit: int = MAX_PRINTED_CHARS) -> str:
    """``text`` cut at ``limit`` characters, with a note of how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... {len(text) - limit} more characters not shown]"


def safe(text: str, limit: int = MAX_PRINTED_CHARS) -> str:
    """Text from the user, a model or a file, made safe to print: secrets redacted, no terminal escape sequences
    or format controls, at most ``limit`` characters (and a note of how many were cut)."""
    return cut(terminal_safe(redact_text(text)), limit)


def json_safe(text: str) -> str:
    """JSON text for a terminal: secrets redacted, and every control or format character (which JSON allows raw
    inside strings) written as a ``\\uXXXX`` escape, so the JSON means the same and shows no hidden text."""
    text = redact_text(text)
    if text.isascii() and not _TERMINAL_CONTROLS.search(text):
        return text
    return "".join(_json_escape(c) for c in text)


def _json_escape(c: str) -> str:
    code = ord(c)
    if c.isascii() and (code >= 0x20 or c in "\n\t") and code != 0x7F:
        return c
    if not c.isascii() and code > 0x9F and unicodedata.category(c) not in _HIDDEN_CATEGORIES:
        return c
    if code > 0xFFFF:  # a surrogate pair, as JSON writes characters beyond the first plane
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def say(line: str) -> None:
    """One line for the user on stderr (progress, notices), made safe to print."""
    print(safe(line), file=sys.stderr, flush=True)


class _Redacting:
    """A text stream that writes through another with every secret redacted (``redact_text``)."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(redact_text(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, ...
        return getattr(self._inner, name)


class _RedactingFilter(logging.Filter):
    """Log records with their message (arguments filled in) redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact_text(record.getMessage())
        record.args = None
        return True


@contextlib.contextmanager
def redacted_output() -> Iterator[None]:
    """``sys.stdout``, ``sys.stderr`` and the root logger's handlers redact secrets for the duration."""
    saved = sys.stdout, sys.stderr
    log_filter = _RedactingFilter()
    handlers = list(logging.getLogger().handlers)
    sys.stdout, sys.stderr = _Redacting(saved[0]), _Redacting(saved[1])
    for h in handlers:
        h.addFilter(log_filter)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
        for h in handlers:
            h.removeFilter(log_filter)


def redact_log_handlers() -> None:
    """Add the redaction to every handler of the root logger (the ones a command set up after it started)."""
    for h in logging.getLogger().handlers:
        if not any(isinstance(f, _RedactingFilter) for f in h.filters):
            h.addFilter(_RedactingFilter())


def _stop_model_requests() -> None:
    """End every model request in flight (only when the model client is loaded: nothing is imported here)."""
    deadline = sys.modules.get("mallvi.graph.backends.llm.deadline")
    if deadline is not None:
        deadline.abort_requests()


def _exit_interrupted() -> None:
    with contextlib.suppress(OSError):
        os.write(2, b"mallvi: interrupted\n")
    os._exit(EXIT_INTERRUPTED)


@contextlib.contextmanager
def interrupts_end_the_process(grace_s: float = INTERRUPT_GRACE_S) -> Iterator[None]:
    """Ctrl-C (SIGINT) ends the command promptly with exit code 130, whatever it is waiting for.

    The first Ctrl-C stops every model request in flight (their threads cannot be interrupted otherwise) and
    raises KeyboardInterrupt in the main thread, so the command unwinds as usual (the arms stop, files close);
    if the process is still alive ``grace_s`` later, or at a second Ctrl-C, it ends at once with code 130.
    Outside the main thread, or when SIGINT is ignored, nothing changes.
    """
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) in (
            signal.SIG_IGN, None):
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    seen: list[bool] = []

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        _stop_model_requests()
        if seen:
            _exit_interrupted()
        seen.append(True)
        timer = threading.Timer(grace_s, _exit_interrupted)
        timer.daemon = True
        timer.start()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def native_stdout_to_stderr() -> Iterator[None]:
    """Point file descriptor 1 at stderr for the duration (C/C++ code printing to stdout), then restore it."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no real stdout (e.g. captured by a test runner)
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
