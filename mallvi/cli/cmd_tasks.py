"""``mallvi tasks``: the benchmark's tiers and tasks: paper ids, instructions, arm layouts, turns and chunks."""

from __future__ import annotations

import argparse
import json
from typing import Any

from mallvi.cli.common import EXIT_OK, UsageError


def register(sub: Any) -> None:
    p = sub.add_parser("tasks", help="list ST-BiBench's tiers and tasks: paper ids, instructions, arm layouts, turns")
    p.add_argument("--tier", help="only this tier: grounding | planning | fine")
    p.add_argument("--json", action="store_true", help="print the tasks as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mallvi.bench.task_catalog import task_infos
    from mallvi.bench.tiers import parse_tier

    try:
        tier = parse_tier(args.tier) if args.tier is not None else None
    except ValueError as e:
        raise UsageError(str(e)) from e
    infos = task_infos(tier)
    if args.json:
        print(json.dumps([i.to_json() for i in infos], indent=2))
        return EXIT_OK
    current = None
    for i in infos:
        if i.tier != current:
            current = i.tier
            print(f"\n{i.tier}:" if current != infos[0].tier else f"{i.tier}:")
        left, right = i.arm_bases_xy_m["left"], i.arm_bases_xy_m["right"]
        check = "none" if i.allocation_threshold_m is None else f"{i.allocation_threshold_m:g} m"
        limits = f"attempts {i.max_turns}" if i.tier == "grounding" else f"turns {i.max_turns}, chunk {i.chunk}"
        print(f"  {i.name} ({i.paper_id}): {i.instruction}")
        print(f"    arms {i.arm_spacing_m:g} m apart (left at x {left[0]:+.2f}, right at x {right[0]:+.2f}, y "
              f"{left[1]:+.2f}); {limits}; arm-allocation check {check}; {i.domain_config}"
              f"{', cluttered table' if i.cluttered else ''}")
    return EXIT_OK
