"""What ``mallvi run`` / ``mallvi demo`` need besides parsing: option -> RunConfig, a default trace folder,
the early refusal check, and the human-readable summary lines. No printing here (cli.py prints)."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

from mallvi.config import AGENTS, ConfigError, LlmConfig, RunConfig
from mallvi.graph.sim_run import RunResult

DEMO_TASK = "stack_blocks_three"
DEMO_INSTRUCTION = "stack the green block on the red block"


def config_from_args(args: Any) -> RunConfig:
    """RunConfig from parsed ``mallvi run`` options; ConfigError for a bad combination."""
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
    )


def llm_notice(cfg: RunConfig) -> str:
    """One line for the user: which agents ask which endpoint, and how long one question may take at most."""
    agents = [a for a in AGENTS if cfg.backend_of(a) == "llm"]
    return (f"model agents: {', '.join(agents)} via {cfg.llm.base_url}; each question takes at most "
            f"{cfg.llm.question_bound_s:.0f} s ({cfg.llm.QUESTION_TIMEOUTS:.0f} x --llm-timeout "
            f"{cfg.llm.timeout_s:g} s, retries and re-asks included)")


def default_trace_dir(task: str, seed: int, root: str | Path = "runs") -> Path:
    return Path(root) / f"{time.strftime('%Y%m%d-%H%M%S')}-{task}-{seed}"


#: seeds are 32-bit: numpy's generators and the scene builders take nothing larger
SEED_LIMIT = 2**32
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: ANSI escape sequences (CSI, OSC and two-character ones) and the other control characters but tab and newline
_TERMINAL_CONTROLS = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, screen clears
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window titles, hyperlinks
    r"|\x1b[@-_]?"  # other escapes, or a lone ESC
    r"|\x9b[0-?]*[ -/]*[@-~]"  # the one-byte CSI
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # the remaining C0 and C1 controls
)


def check_seed(seed: int, option: str = "--seed") -> None:
    """A seed must lie in 0 .. 2**32 - 1 (ValueError otherwise)."""
    if not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"{option} must be between 0 and {SEED_LIMIT - 1}, got {seed}")


def check_checkpoint(path: str | Path, resume_thread: str | None) -> None:
    """Refuse a checkpoint that is a folder, lies under a file or is not an SQLite file, and a ``--resume`` whose
    thread it does not hold (ValueError with what to do instead); a missing file is fine for a new run."""
    file = Path(path)
    if file.is_dir():
        raise ValueError(f"--checkpoint {file} is a folder; give the SQLite file to use")
    if not file.exists():
        if any(p.exists() and not p.is_dir() for p in file.parents):
            raise ValueError(f"--checkpoint {file} cannot be created: a parent of it is a file")
        if resume_thread is not None:
            raise ValueError(f"--resume {resume_thread}: there is no checkpoint at {file}; give the paused run's "
                             "--trace-dir or --checkpoint")
        return
    try:
        with open(file, "rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as e:
        raise ValueError(f"--checkpoint {file} cannot be read: {e.strerror or e}") from e
    if head and head != _SQLITE_MAGIC:
        raise ValueError(f"--checkpoint {file} is not an SQLite checkpoint file")
    if resume_thread is not None and not _has_thread(file, resume_thread):
        raise ValueError(f"--resume {resume_thread}: no paused run with that id in {file}")


def _has_thread(file: Path, thread_id: str) -> bool:
    try:
        with contextlib.closing(sqlite3.connect(f"file:{file}?mode=ro", uri=True)) as conn:
            row = conn.execute("SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1", (thread_id,)).fetchone()
    except sqlite3.Error:  # damaged, or no checkpoints table yet
        return False
    return row is not None


def terminal_safe(text: str) -> str:
    """``text`` without escape sequences or control characters (tab and newline kept), to print on a terminal."""
    return _TERMINAL_CONTROLS.sub("", text)


def precheck(instruction: str | None, cfg: RunConfig) -> None:
    """Refuse an instruction the rules grammar cannot parse before any world is built (exit 2, nothing moves)."""
    if instruction is None or cfg.backend_of("decomposer") != "rules":
        return
    from mallvi.graph.backends.rules.grammar import parse_instruction

    parse_instruction(instruction)  # raises RefusalError


def summary_lines(r: RunResult) -> list[str]:
    lines = [f"instruction: {r.instruction}", f"task: {r.task} (seed {r.seed})",
             f"status: {r.status}; success: {r.success} ({r.success_source}); graph believes: {r.graph_success}"]
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
        lines.append(f"paused: resume with --resume {r.thread_id}")
    return lines


__all__ = ["DEMO_INSTRUCTION", "DEMO_TASK", "SEED_LIMIT", "ConfigError", "check_checkpoint", "check_seed",
           "config_from_args", "default_trace_dir", "llm_notice", "precheck", "summary_lines", "terminal_safe"]
