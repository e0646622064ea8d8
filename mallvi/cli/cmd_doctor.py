"""``mallvi doctor``: the render device, library versions and extras; with ``--base-url``, what an endpoint offers."""

from __future__ import annotations

import argparse
import json
from typing import Any

from mallvi.cli.common import EXIT_OK, EXIT_UNAVAILABLE, UsageError


def register(sub: Any) -> None:
    p = sub.add_parser("doctor", help="report the render device, library versions and installed extras")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--base-url", help="also check this OpenAI-compatible endpoint: models, schema-constrained "
                                      "decoding, vision (key: $OPENAI_API_KEY)")
    p.add_argument("--llm-model", help="the endpoint's model to check (default: the first it lists)")
    p.add_argument("--llm-timeout", type=float, default=30.0, help="seconds per endpoint request (default: 30)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mallvi.config import ConfigError
    from mallvi.diagnostics import collect_report, endpoint_lines, endpoint_report

    endpoint = None
    if args.base_url:
        try:
            endpoint = endpoint_report(args.base_url, args.llm_model, args.llm_timeout)
        except ConfigError as e:
            raise UsageError(str(e)) from e
    report = collect_report()
    if args.json:
        print(json.dumps({**report, "endpoint": endpoint} if endpoint else report, indent=2))
    else:
        for key, value in report.items():
            if isinstance(value, dict):
                print(f"{key}:")
                for k, v in value.items():
                    print(f"  {k}: {v}")
            else:
                print(f"{key}: {value}")
        if endpoint:
            print("\n".join(endpoint_lines(endpoint)))
    if not report.get("render_device_ok") or (endpoint is not None and not endpoint.get("reachable")):
        return EXIT_UNAVAILABLE
    return EXIT_OK
