"""``mallvi viz DIR``: the trace viewer for a run, a folder of runs or a bench folder, on a local web server."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from mallvi.cli.common import EXIT_OK, UsageError


def register(sub: Any) -> None:
    p = sub.add_parser("viz", help="browse run traces and benchmark results in a local web viewer")
    p.add_argument("dir", help="a trace directory, a folder of them, or a `mallvi bench` output folder")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8050, help="port to listen on (default: 8050)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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
