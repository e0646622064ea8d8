"""``mallvi compare A B``: two bench output folders side by side, per task and per seed.

A command of its own rather than ``mallvi bench compare``: ``bench`` requires ``--tier`` and ``--out`` and takes no
positional arguments, so a sub-command under it would change how every bench command line is read.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from mallvi.cli.common import EXIT_OK, UsageError, safe


def register(sub: Any) -> None:
    p = sub.add_parser("compare", help="put two `mallvi bench` output folders side by side, per task and per seed")
    p.add_argument("a", help="the first bench output folder (A)")
    p.add_argument("b", help="the second bench output folder (B)")
    p.add_argument("--seeds", type=int, default=20, metavar="N",
                   help="list at most N seeds whose outcome differs (default: 20; --json lists all)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mallvi.bench.compare import BenchFolderError, compare_folders, render_comparison

    if args.seeds < 0:
        raise UsageError(f"--seeds must be 0 or more, got {args.seeds}")
    try:
        comparison = compare_folders(args.a, args.b)
    except BenchFolderError as e:
        raise UsageError(str(e)) from e
    if args.json:
        print(json.dumps(comparison, indent=2))
    else:
        print(safe(render_comparison(comparison, max_seeds=args.seeds)), end="")
    return EXIT_OK
