"""The `mallvi` command line. The only module of mallvi that prints, reads the terminal or exits.

Exit codes: 0 success, 1 the task failed, 2 bad input (nothing was executed).
Each sub-command lives in a ``_cmd_<name>`` function registered in ``_build_parser``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


class UsageError(Exception):
    """Bad input from the user: reported with exit code 2, nothing executed."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"mallvi: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def _cmd_doctor(args: argparse.Namespace) -> int:
    from mallvi.doctor import collect_report

    report = collect_report()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            if isinstance(value, dict):
                print(f"{key}:")
                for k, v in value.items():
                    print(f"  {k}: {v}")
            else:
                print(f"{key}: {value}")
    return EXIT_OK if report.get("render_device_ok") else EXIT_FAILED


def _cmd_viz(args: argparse.Namespace) -> int:
    from mallvi.logviz.app import ServeError, check_serve_args, is_loopback, serve

    try:
        catalog = check_serve_args(args.dir, args.host, args.port)
    except ServeError as e:
        raise UsageError(str(e)) from e
    runs, benches = len(catalog.keys()), len(catalog.bench_keys)
    if runs == 0 and benches == 0:
        print(f"mallvi viz: no traces under {args.dir} yet; runs will show as they appear", file=sys.stderr)
    if not is_loopback(args.host):
        print(f"mallvi viz: warning: listening on {args.host} exposes the traces to the network", file=sys.stderr)
    print(f"mallvi viz: {runs} run(s), {benches} benchmark folder(s) at http://{args.host}:{args.port}/ (Ctrl-C stops)",
          file=sys.stderr)
    serve(args.dir, host=args.host, port=args.port)
    return EXIT_OK


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mallvi", description="Multi-agent dual-arm manipulation (MALLVi) in sim or on a rig.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages to stderr")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("doctor", help="report the render device, library versions and installed extras")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_cmd_doctor)

    p = sub.add_parser("viz", help="browse run traces and benchmark results in a local web viewer")
    p.add_argument("dir", help="a trace directory, a folder of them, or a `mallvi bench` output folder")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8050, help="port to listen on (default: 8050)")
    p.set_defaults(func=_cmd_viz)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        code: int = args.func(args)
    except UsageError as e:
        print(f"mallvi: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("mallvi: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    raise SystemExit(main())
