"""``mallvi run`` and ``mallvi demo``: one instruction through the agent graph on a Station, then its summary."""

from __future__ import annotations

import argparse
import json
from typing import Any

from mallvi.cli.common import EXIT_UNAVAILABLE, UsageError, json_safe, native_stdout_to_stderr, safe, say
from mallvi.cli.run_options import DEMO_INSTRUCTION, DEMO_TASK, RunCommand, add_run_options, command_from_args
from mallvi.orchestration.result import RunResult


def register(sub: Any) -> None:
    p = sub.add_parser("run", help="run one instruction through the agent graph in the simulator or on a rig")
    add_run_options(p)
    p.set_defaults(func=run)
    p = sub.add_parser("demo", help="the default job: stack the green block on the red block in the simulator")
    add_run_options(p, demo=True)
    p.set_defaults(func=demo)


def run(args: argparse.Namespace) -> int:
    if args.instruction is not None:  # pasted text may carry colour codes: they are no part of an instruction
        args.instruction = safe(args.instruction)
    instruction = args.instruction if args.instruction and args.instruction.strip() else None
    if args.instruction is not None and instruction is None:
        raise UsageError("the instruction is empty")
    return run_and_report(instruction, args.task, args)


def demo(args: argparse.Namespace) -> int:
    return run_and_report(DEMO_INSTRUCTION, DEMO_TASK, args)


def run_and_report(instruction: str | None, task: str | None, args: argparse.Namespace) -> int:
    from mallvi.config import ConfigError
    from mallvi.orchestration.prechecks import check_checkpoint, precheck_instruction
    from mallvi.orchestration.stations import RunRequest, check_options, check_video
    from mallvi.tracing.trace import claim_run_dir

    if getattr(args, "resume", None):
        instruction, task = restore_paused_run(args, instruction, task)
    try:
        cmd = command_from_args(args, instruction, task)
        request = RunRequest(instruction=cmd.instruction, task=cmd.task, seed=cmd.seed, checkpoint=cmd.checkpoint,
                             resume_thread=cmd.resume, calibration=cmd.calibration)
        if cmd.video:
            check_video(cmd.cfg, cmd.trace_root)
        check_options(cmd.cfg, request)
        precheck_instruction(cmd.instruction, cmd.cfg)
    except (ConfigError, ValueError) as e:
        raise UsageError(str(e)) from e
    if cmd.cfg.uses_llm and not cmd.quiet:
        from mallvi.cli.run_options import llm_notice

        say(f"[mallvi] {llm_notice(cmd.cfg)}")
    try:
        if cmd.checkpoint is not None:
            check_checkpoint(cmd.checkpoint, cmd.resume)
        trace_dir = claim_run_dir(cmd.trace_root)  # a reused folder: this run gets its own run-N/ in it
    except ValueError as e:
        raise UsageError(str(e)) from e
    except OSError as e:
        raise UsageError(f"cannot write the trace to {cmd.trace_root}: {e.strerror or e}") from e
    from dataclasses import replace

    result = _run(cmd, replace(request, trace_dir=trace_dir), args.approve)
    if result is None:
        return EXIT_UNAVAILABLE
    return report(result, cmd)


def restore_paused_run(args: argparse.Namespace, instruction: str | None, task: str | None
                       ) -> tuple[str | None, str | None]:
    """``--resume``: every run option left out takes the paused run's value, recorded in its checkpoint
    (``orchestration.resume``); an option given with another value is bad input. Unchanged when the checkpoint
    holds no record of the run (the checks that follow say what is missing)."""
    from pathlib import Path

    from mallvi.config import ConfigError
    from mallvi.orchestration.resume import recorded_settings, restore_options

    checkpoint = args.checkpoint or (Path(args.trace_dir) / "checkpoints.sqlite" if args.trace_dir else None)
    if checkpoint is None:
        return instruction, task
    try:
        settings = recorded_settings(Path(checkpoint), args.resume)
        if settings is None:
            return instruction, task
        blank = argparse.ArgumentParser(add_help=False)
        add_run_options(blank)
        values = restore_options(settings, {**vars(args), "instruction": instruction, "task": task},
                                 vars(blank.parse_args([])), args.resume)
    except ConfigError as e:
        raise UsageError(str(e)) from e
    for name, value in values.items():
        setattr(args, name, value)
    return values["instruction"], values["task"]


def _run(cmd: RunCommand, request: Any, approve: bool) -> RunResult | None:
    from mallvi.bench.task_scenes import scene_catalog
    from mallvi.cli.approval import ask_approval
    from mallvi.config import ConfigError
    from mallvi.contracts.errors import DriverError
    from mallvi.graph.agent_errors import RefusalError
    from mallvi.orchestration.run_instruction import run
    from mallvi.tracing.trace import release_run_dir

    progress = None if cmd.quiet else (lambda line: say(f"[mallvi] {line}"))
    try:
        with native_stdout_to_stderr():  # native libraries (the motion planner) print; stdout stays clean
            return run(request, cmd.cfg, catalog=scene_catalog(), progress=progress,
                       decide=ask_approval if approve else None, video=cmd.video, trace_images=cmd.trace_images,
                       trace_state=cmd.trace_state)
    except (ConfigError, RefusalError, UsageError) as e:
        release_run_dir(request.trace_dir)
        raise UsageError(str(e)) from e
    except DriverError as e:
        release_run_dir(request.trace_dir)
        say(f"mallvi: error: the rig did not come up: {e}")
        return None


def report(result: RunResult, cmd: RunCommand) -> int:
    """Print the run's summary (or its JSON) and return the exit code: 0 succeeded or planned, 1 failed,
    2 refused (bad input), 3 refused by the model endpoint, 4 paused."""
    if cmd.json:
        from mallvi.tracing.redaction import redact_value

        data = json.loads(result.model_dump_json(exclude={"goal_check"}))  # pydantic's JSON: no NaN
        print(json_safe(json.dumps(redact_value(data), ensure_ascii=False)))
    else:
        print("\n".join(safe(line) for line in summary_lines(result)))
    if result.status == "paused" and cmd.json and result.thread_id:
        say(f"mallvi: paused: nothing failed; resume with --resume {result.thread_id}")
    if result.status == "refused":
        say(f"mallvi: error: refused: {result.refusal}")
        if result.refusal_cause == "model":  # the endpoint, not the instruction: not bad input
            return EXIT_UNAVAILABLE
    return result.exit_code


def summary_lines(r: RunResult) -> list[str]:
    """The run's summary for people. ``status`` is the run's (never "succeeded" beside success False); the graph's
    own end state and belief follow it."""
    lines = [f"instruction: {r.instruction}", f"task: {r.task} (seed {r.seed})",
             f"status: {r.status}; success: {r.success} ({r.success_source}); graph status: "
             f"{r.graph_status or r.status}, graph believes: {r.graph_success}"]
    for i, s in enumerate(r.subtasks):
        lines.append(f"  subtask {i}: {s} (failed attempts: {r.attempts.get(str(i), 0)})")
    for c in r.goal_check:
        lines.append(f"  goal {c.predicate}: {'holds' if c.holds else 'does NOT hold'} ({c.detail})")
    if r.refusal:
        lines.append(f"refused: {r.refusal}")
    for call in r.planned_calls:
        lines.append(f"  planned: {call}")
    if r.failure_report:
        lines.append(f"failure: {r.failure_report.get('reason')}")
    lines.append(f"wall time: {r.wall_s:.1f} s; llm calls: {r.llm_calls.get('calls', 0)}")
    if r.trace:
        lines.append(f"trace: {r.trace}  (view with: mallvi viz {r.trace})")
    if r.status == "paused" and r.thread_id:
        lines.append(f"paused: nothing failed; resume with --resume {r.thread_id} (exit code 4)")
    return lines


__all__ = ["report", "run", "run_and_report", "summary_lines"]

