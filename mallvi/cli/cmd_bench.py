"""``mallvi bench``: ST-BiBench tiers through the graph, the expert or the single agent, resumable and parallel."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from mallvi.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    UsageError,
    json_safe,
    native_stdout_to_stderr,
    safe,
    terminal_safe,
)
from mallvi.tracing.redaction import redact_text


def register(sub: Any) -> None:
    p = sub.add_parser("bench", help="run ST-BiBench tiers (grounding, planning, fine) and report beside the paper")
    p.add_argument("--tier", required=True, help="grounding | planning | fine")
    p.add_argument("--tasks", default="all", help="'all' (default) or a comma-separated list of the tier's tasks")
    p.add_argument("--episodes", type=int, default=100, help="episodes per task (default: 100, as in the paper)")
    p.add_argument("--seed-start", type=int, default=100000, help="first seed (default: 100000)")
    p.add_argument("--agent", choices=["mallvi", "mallvi-no-reflector", "single", "expert"], default="mallvi",
                   help="mallvi (the graph, default), mallvi-no-reflector, single (one planner model) or expert")
    p.add_argument("--backend", choices=["rules", "llm"], default="rules", help="backend of the graph's agents")
    p.add_argument("--agent-backend", action="append", metavar="AGENT=BACKEND",
                   help="graph agents: override one agent's backend, e.g. descriptor=rules (repeatable)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $MALLVI_BASE_URL); key: $OPENAI_API_KEY")
    p.add_argument("--llm-model", help="planner / text model")
    p.add_argument("--vlm-model", help="vision model")
    p.add_argument("--llm-timeout", type=float, default=60.0,
                   help="seconds per model request (default: 60); one question takes at most 3 times this")
    p.add_argument("--llm-decoding", default="auto", metavar="MODE",
                   help="how to get JSON from the model (as `mallvi run --llm-decoding`; default: auto)")
    p.add_argument("--perception", choices=["sim", "color", "neural"], default="color", help="default: color")
    p.add_argument("--workers", type=int, default=None,
                   help="local worker processes (default: one per free core, at least one)")
    p.add_argument("--station", choices=["sim", "twin"], default="sim",
                   help="sim (default) or twin: the rig's drivers, camera and skills on a simulated twin of each "
                        "scene (graph agents only; needs --calibration)")
    p.add_argument("--calibration", help="--station twin: calibration YAML from `mallvi calibrate --robot twin`")
    p.add_argument("--ray-address", help="run episodes as Ray tasks on this cluster (e.g. ray://head:10001)")
    p.add_argument("--contingency", choices=["none", "easy", "medium", "hard"], default="none",
                   help="simulated fault level (default: none)")
    p.add_argument("--out", required=True, help="output folder; rerunning with the same folder resumes")
    p.add_argument("--no-images", action="store_true", help="do not store the head image of each episode")
    p.add_argument("--video", action="store_true",
                   help="record each episode's head camera as traces/<episode>/video/head.mp4 (the viewer plays it)")
    p.add_argument("--trace-images", choices=["all", "keyframes", "none"], default="all",
                   help="which pictures the episode traces keep (default: all)")
    p.add_argument("--single-protocol", choices=["paper", "mallvi"], default="paper",
                   help="single agent (and the expert's skill semantics): 'paper' (default) as the original "
                        "benchmark runs it, comparable with its table; 'mallvi': mallvi's own prompts, inputs and "
                        "skills, not comparable (runs from before this option are 'mallvi')")
    p.add_argument("--randomization", choices=["original", "none"], default="original",
                   help="original (default): each task's table texture, light colours and distractors as the "
                        "original benchmark configures them; none: a plain, uncluttered table")
    p.add_argument("--example-images", metavar="DIR",
                   help="single agent: a folder of <task>.png example images sent with every turn (paper protocol: "
                        "instead of the ones mallvi ships)")
    p.add_argument("--no-reuse", action="store_true",
                   help="render every frame and scan every image afresh (same results, slower; for cost measurements)")
    p.add_argument("--json", action="store_true", help="print results.json on stdout instead of the table")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=run)


def config_from_args(args: argparse.Namespace) -> Any:
    """The typed ``BenchConfig`` of the options; ValueError for bad input."""
    from mallvi.bench.bench_config import BenchConfig
    from mallvi.bench.tiers import parse_tier, select_tasks
    from mallvi.config import check_base_url

    tier = parse_tier(args.tier)
    tasks = tuple(select_tasks(tier, args.tasks))
    llm = {k: v for k, v in {"base_url": args.base_url or os.environ.get("MALLVI_BASE_URL"),
                             "model": args.llm_model, "vlm_model": args.vlm_model,
                             "example_images": args.example_images}.items() if v}  # fmt: skip
    agent_backends = {}
    for item in args.agent_backend or []:
        agent, _, backend = item.partition("=")
        agent_backends[agent.strip()] = backend.strip()
    uses_llm = args.backend == "llm" or args.agent == "single" or "llm" in agent_backends.values()
    if "base_url" in llm and uses_llm:
        check_base_url(llm["base_url"])
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}")
    return BenchConfig(tier=tier, tasks=tasks, episodes=args.episodes, seed_start=args.seed_start,
                       agent=args.agent, backend=args.backend, perception=args.perception,
                       contingency=args.contingency, llm=llm, save_images=not args.no_images,
                       video=args.video, trace_images=args.trace_images,
                       single_protocol=args.single_protocol, reuse=not args.no_reuse,
                       station=args.station, calibration=args.calibration,
                       randomization=args.randomization, agent_backends=agent_backends,
                       llm_timeout_s=args.llm_timeout, llm_decoding=args.llm_decoding)  # fmt: skip


def progress_printer(quiet: bool) -> Any:
    """A callback drawing ``[bench] done/total bar success%`` on stderr (one line per episode if not a TTY)."""
    from mallvi.bench.runner import Progress

    tty = sys.stderr.isatty()

    def show(p: Progress) -> None:
        done, total, wins, last = p.done, p.total, p.successes, p.last
        width = 24
        filled = int(width * done / total) if total else width
        rate = 100.0 * wins / done if done else 0.0
        status = "skipped" if last.get("status") == "skipped" else ("ok" if last.get("success") else "fail")
        if last.get("status") == "error":
            status = "error"
        line = (f"[bench] {done}/{total} [{'#' * filled}{'-' * (width - filled)}] success {rate:.0f}% "
                f"({wins}/{done})  {last['task']} seed {last['seed']}: {status}")  # fmt: skip
        if tty:
            print("\r" + line.ljust(110), end="" if done < total else "\n", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)

    return None if quiet else show


def run(args: argparse.Namespace) -> int:
    from mallvi.bench.preflight import ServiceUnavailableError
    from mallvi.bench.runner import RunDirError, run_bench

    try:
        cfg = config_from_args(args)
        with native_stdout_to_stderr():  # the motion planner's C++ code writes notices to fd 1
            results = run_bench(cfg, args.out, workers=args.workers, ray_address=args.ray_address,
                                on_progress=progress_printer(args.quiet))
    except (ValueError, RunDirError) as e:  # bad input, a model that cannot serve the run (UnusableModelError)
        raise UsageError(str(e)) from e
    except ServiceUnavailableError as e:
        print(f"mallvi: {safe(str(e))}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    if args.json:
        print(json_safe(json.dumps(results, indent=2)))
    else:
        with open(f"{args.out}/table.md", encoding="utf-8") as fh:
            print(terminal_safe(redact_text(fh.read())), end="")
        if results.get("cost"):
            from mallvi.bench.cost import format_totals

            print("\n" + format_totals(results["cost"]) + f"; {results['run'].get('episodes_per_minute') or 0:.1f} "
                  f"episodes per minute with {results['run'].get('workers')} worker(s)")  # fmt: skip
        print(f"\nresults: {args.out}/results.json  episodes: {args.out}/episodes.jsonl  traces: {args.out}/traces/")
    errors = sum(t["errors"] for t in results["tasks"].values())
    if errors:
        print(f"mallvi: {errors} episode(s) ended with an exception; see episodes.jsonl", file=sys.stderr)
    return EXIT_FAILED if errors else EXIT_OK
