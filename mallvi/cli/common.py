"""What every command shares: exit codes, bad-input errors, the argument parser, safe printing."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from collections.abc import Iterator

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_UNAVAILABLE = 3
EXIT_INTERRUPTED = 130
EXIT_CODES = f"""exit codes:
  {EXIT_OK}    success
  {EXIT_FAILED}    the task was carried out and failed (a failure report says why)
  {EXIT_BAD_INPUT}    bad input: a clear message on stderr, nothing was executed
  {EXIT_UNAVAILABLE}    a device or the model endpoint was unavailable: the rig or camera did not come up,
       the render device is missing (doctor), or the model server failed or gave no
       usable answer; try again when it is back
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)"""

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
    """``text`` without escape sequences or control characters (tab and newline kept), to print on a terminal."""
    return _TERMINAL_CONTROLS.sub("", text)


def safe(text: str) -> str:
    """Text from the user, a model or a file, made safe to print: no terminal escape sequences."""
    return terminal_safe(text)


def say(line: str) -> None:
    """One line for the user on stderr (progress, notices), made safe to print."""
    print(safe(line), file=sys.stderr, flush=True)


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
