"""The options of ``mallvi run`` and ``mallvi demo``, and how they become a typed ``RunCommand``."""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mallvi.cli.common import UsageError
from mallvi.config import AGENTS, RunConfig

DEMO_TASK = "stack_blocks_three"
DEMO_INSTRUCTION = "stack the green block on the red block"
#: where a rig's or a twin's calibration is looked for when --calibration is not given
DEFAULT_CALIBRATION = "rig_calibration.yaml"
#: seeds are 32-bit: numpy's generators and the scene builders take nothing larger
SEED_LIMIT = 2**32


@dataclass(frozen=True)
class RunCommand:
    """``mallvi run`` as a typed request: the run configuration and what to run where.

    Attributes:
        cfg: backends, model endpoint, perception, robot and ablations.
        instruction: what to do (None: the scene's own instruction).
        task, seed: the scene and its seed (None when not given).
        trace_root: the folder the trace goes in (a run-N/ subfolder when it already holds a run).
        checkpoint: the SQLite checkpoint file, when the run can pause (``--approve``, ``--resume``).
        resume: the paused run to continue.
        calibration: the twin's or the rig's calibration file.
        json, quiet: how to report.
        video: record the head camera as an MP4 in the trace (simulator and twin).
        trace_images, trace_state: what the trace keeps (``--trace-images``, ``--trace-state``).
    """

    cfg: RunConfig
    instruction: str | None
    task: str | None
    seed: int | None
    trace_root: Path
    checkpoint: Path | None
    resume: str | None
    calibration: Path | None
    json: bool
    quiet: bool
    video: bool = False
    trace_images: str = "all"
    trace_state: str = "full"


def add_run_options(p: argparse.ArgumentParser, demo: bool = False) -> None:
    if not demo:
        p.add_argument("instruction", nargs="?", default=None,
                       help="what to do; omitted: the scene's own instruction and success check")
        p.add_argument("--task", help="the scene to run in (e.g. stack_blocks_three); required in the simulator")
    p.add_argument("--seed", type=int, default=None, help="scene seed, 0 .. 2^32-1 (default: 0; not on a rig)")
    p.add_argument("--backend", choices=["rules", "llm"], default="rules", help="backend of every agent")
    p.add_argument("--agent-backend", action="append", metavar="AGENT=BACKEND",
                   help="override one agent's backend, e.g. reflector=llm (repeatable)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $MALLVI_BASE_URL); key: $OPENAI_API_KEY")
    p.add_argument("--llm-model", help="text model for the llm backend")
    p.add_argument("--vlm-model", help="vision model (Descriptor, Reflector) for the llm backend")
    p.add_argument("--llm-timeout", type=float, default=60.0,
                   help="seconds per model request (default: 60); one question, retries and re-asks included, "
                        "takes at most 3 times this")
    p.add_argument("--llm-decoding", default="auto", metavar="MODE",
                   help="how to get JSON from the model: auto (default: probe the endpoint for schema-constrained "
                        "decoding), json_schema, json_object_schema, structured_outputs, guided_json or prompt")
    p.add_argument("--perception", choices=["sim", "color", "neural"], default="color",
                   help="color (default), sim (privileged masks: isolates planning) or neural")
    p.add_argument("--robot", choices=["sim", "piper", "twin"], default="sim",
                   help="sim; piper (the real rig); twin (the rig's drivers, camera and skills on a simulated twin "
                        "of --task, needs --calibration from `mallvi calibrate --robot twin`)")
    p.add_argument("--camera", choices=["sim", "realsense"], default="sim")
    p.add_argument("--calibration", default=None,
                   help="twin and real rig: calibration YAML from `mallvi calibrate` (default: "
                        f"$MALLVI_RIG_CALIBRATION or {DEFAULT_CALIBRATION})")
    p.add_argument("--no-reflector", action="store_true", help="ablation: no verification, no retries")
    p.add_argument("--single-agent", action="store_true", help="ablation: one planner call per step")
    p.add_argument("--approve", action="store_true", help="ask before every Actor step (approve/edit/abort/pause)")
    p.add_argument("--resume", metavar="THREAD_ID", help="continue a paused run from its checkpoint")
    p.add_argument("--checkpoint", help="SQLite checkpoint file (default: TRACE_DIR/checkpoints.sqlite)")
    p.add_argument("--dry-run", action="store_true", help="plan and think, stop before the first motion")
    p.add_argument("--contingency", help="fault injection level (none|easy|medium|hard|custom)")
    p.add_argument("--action-space", choices=["primitives", "ee"], default="primitives",
                   help="what the Thinker plans in: the skills (default) or 16-number end-effector actions moving "
                        "both arms at once (the benchmark's fine tier)")
    p.add_argument("--trace-dir", help="where the trace goes (default: runs/<time>-<task>-<seed>); a folder that "
                                       "already holds a run gets this one in a new run-N/ subfolder")
    p.add_argument("--video", action="store_true",
                   help="record the head camera as TRACE_DIR/video/head.mp4 (simulator and twin; the viewer plays it)")
    p.add_argument("--trace-images", choices=["all", "keyframes", "none"], default="all",
                   help="which pictures the trace keeps: all, the Descriptor's and Reflector's only, or none")
    p.add_argument("--trace-state", choices=["full", "none"], default="full",
                   help="whether the trace keeps each node's input state (most of a long run's trace)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def check_seed(seed: int, option: str = "--seed") -> None:
    """A seed must lie in 0 .. 2**32 - 1 (UsageError otherwise)."""
    if not 0 <= seed < SEED_LIMIT:
        raise UsageError(f"{option} must be between 0 and {SEED_LIMIT - 1}, got {seed}")


def config_from_args(args: Any) -> RunConfig:
    """RunConfig from parsed ``mallvi run`` options; ConfigError for a bad combination."""
    from mallvi.config import LlmConfig

    agent_backends: dict[str, Any] = {}
    for item in (args.agent_backend or []):
        agent, _, backend = item.partition("=")
        agent_backends[agent.strip()] = backend.strip()
    llm = LlmConfig.from_env(args.base_url, args.llm_model, args.vlm_model, timeout_s=args.llm_timeout,
                             decoding=getattr(args, "llm_decoding", "auto"))
    return RunConfig(
        backend=args.backend, agent_backends=agent_backends, llm=llm, perception=args.perception, robot=args.robot,
        camera=args.camera, reflector=not args.no_reflector, single_agent=args.single_agent, approve=args.approve,
        dry_run=args.dry_run, contingency=args.contingency,
        action_space=getattr(args, "action_space", "primitives"),
    )


def command_from_args(args: argparse.Namespace, instruction: str | None, task: str | None) -> RunCommand:
    """The typed request of ``mallvi run``/``demo``; UsageError or ConfigError for bad input."""
    if args.seed is not None:
        check_seed(args.seed)
    cfg = config_from_args(args)
    calibration = args.calibration
    if calibration is None and cfg.robot in ("piper", "twin"):
        calibration = os.environ.get("MALLVI_RIG_CALIBRATION", DEFAULT_CALIBRATION)
    seed_label = args.seed if args.seed is not None else 0
    trace_root = Path(args.trace_dir) if args.trace_dir else default_trace_dir(task or "real_rig", seed_label)
    checkpoint = args.checkpoint or (trace_root / "checkpoints.sqlite" if args.approve or args.resume else None)
    return RunCommand(cfg=cfg, instruction=instruction, task=task, seed=args.seed, trace_root=trace_root,
                      checkpoint=Path(checkpoint) if checkpoint is not None else None, resume=args.resume,
                      calibration=Path(calibration) if calibration is not None else None, json=args.json,
                      quiet=args.quiet, video=bool(getattr(args, "video", False)),
                      trace_images=getattr(args, "trace_images", "all"),
                      trace_state=getattr(args, "trace_state", "full"))


def default_trace_dir(task: str, seed: int, root: str | Path = "runs") -> Path:
    return Path(root) / f"{time.strftime('%Y%m%d-%H%M%S')}-{task}-{seed}"


def llm_notice(cfg: RunConfig) -> str:
    """One line for the user: which agents ask which endpoint, and how long one question may take at most."""
    agents = [a for a in AGENTS if cfg.backend_of(a) == "llm"]
    return (f"model agents: {', '.join(agents)} via {cfg.llm.base_url}; each question takes at most "
            f"{cfg.llm.question_bound_s:.0f} s ({cfg.llm.QUESTION_TIMEOUTS:.0f} x --llm-timeout "
            f"{cfg.llm.timeout_s:g} s, retries and re-asks included)")
