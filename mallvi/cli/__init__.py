"""The `mallvi` command line: the only part of mallvi that prints, reads the terminal or sets exit codes.

One module per command (``cmd_<name>.py``), each turning its arguments into a typed config before anything below
sees them; this module only builds the parser and dispatches. Exit codes are in ``common.EXIT_CODES``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from mallvi.cli import cmd_bench, cmd_calibrate, cmd_compare, cmd_doctor, cmd_perceive, cmd_run, cmd_tasks, cmd_viz
from mallvi.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    Parser,
    UsageError,
    interrupts_end_the_process,
    redact_log_handlers,
    redacted_output,
    safe,
)

COMMANDS = (cmd_doctor, cmd_viz, cmd_calibrate, cmd_run, cmd_bench, cmd_compare, cmd_tasks, cmd_perceive)


def build_parser() -> Parser:
    parser = Parser(prog="mallvi", description="Multi-agent dual-arm manipulation (MALLVi) in sim or on a rig.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages to stderr")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code. Everything it writes is redacted, and Ctrl-C ends it with code 130."""
    with redacted_output(), interrupts_end_the_process():
        try:
            return _main(argv)
        except KeyboardInterrupt:
            print("mallvi: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    redact_log_handlers()
    try:
        code: int = args.func(args)
    except UsageError as e:
        print(f"mallvi: error: {safe(str(e))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return code
