"""Resuming a paused run: its own settings, restored from its checkpoint, and a graph that looks again.

A run with a checkpoint records its settings (``RunSettings``: scene, seed, robot, perception, backends, model
endpoint without its key, ablations, calibration with its SHA-256) in the checkpoint file, keyed by the run's
thread id. ``mallvi run --resume ID --trace-dir DIR`` reads them back (``restore_options``): every option left out
takes the paused run's value, and an option given with another value is refused.

On resume the graph does not act on what it saw before the pause (``rewind_for_resume``): the perception of the
new process has seen nothing yet, and on a simulated station (simulator or twin) the world is rebuilt from the
seed, so objects moved before the pause are back where they started. The graph therefore scans the scene again
(the Descriptor; without the Reflector, the Perceptor onwards) before the next Actor step; on a simulated station
it also starts over at the first subtask once anything has moved, because the rebuilt world has undone it. Every
step is approved again where the run asks for approval.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from mallvi.config import ConfigError, RunConfig

SETTINGS_TABLE = "mallvi_run_settings"
#: a recorded settings row longer than this is not one of ours
_MAX_SETTINGS_CHARS = 100_000


@dataclass(frozen=True)
class RunSettings:
    """What a run was started with, as recorded in its checkpoint (never the API key)."""

    instruction: str | None
    task: str | None
    seed: int | None
    robot: str
    camera: str
    perception: str
    backend: str
    agent_backends: dict[str, str]
    base_url: str | None
    llm_model: str
    vlm_model: str
    llm_timeout_s: float
    llm_decoding: str
    reflector: bool
    single_agent: bool
    approve: bool
    dry_run: bool
    contingency: str | None
    calibration: str | None
    calibration_sha256: str | None

    @staticmethod
    def of(instruction: str | None, task: str | None, seed: int | None, calibration: Path | None,
           cfg: RunConfig) -> RunSettings:
        sha = None
        if calibration is not None:
            from mallvi.robot_drivers.calibration.calibration_files import file_sha256

            with contextlib.suppress(OSError):
                sha = file_sha256(calibration)
        return RunSettings(
            instruction=instruction, task=task, seed=seed, robot=cfg.robot, camera=cfg.camera,
            perception=cfg.perception, backend=cfg.backend, agent_backends=dict(cfg.agent_backends),
            base_url=cfg.llm.base_url, llm_model=cfg.llm.llm_model, vlm_model=cfg.llm.vlm_model,
            llm_timeout_s=cfg.llm.timeout_s, llm_decoding=cfg.llm.decoding, reflector=cfg.reflector,
            single_agent=cfg.single_agent, approve=cfg.approve, dry_run=cfg.dry_run, contingency=cfg.contingency,
            calibration=str(calibration) if calibration is not None else None, calibration_sha256=sha)

    @staticmethod
    def from_json(data: Any) -> RunSettings:
        """The settings in ``data``; ValueError for anything not written by ``to_json``."""
        if not isinstance(data, dict):
            raise ValueError("not a mapping")
        values: dict[str, Any] = {}
        for f in fields(RunSettings):
            if f.name not in data:
                raise ValueError(f"missing {f.name!r}")
            value = data[f.name]
            if not _fits(str(f.type), value):
                raise ValueError(f"{f.name!r} is {str(value)[:40]!r}")
            values[f.name] = value
        return RunSettings(**values)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _fits(annotation: str, value: Any) -> bool:
    """Whether ``value`` has the type a ``RunSettings`` field is annotated with (JSON's types)."""
    kinds: dict[str, type | tuple[type, ...]] = {"str": str, "int": int, "float": (int, float), "bool": bool,
                                                 "dict[str, str]": dict, "None": type(None)}
    allowed = [kinds[a.strip()] for a in annotation.split("|")]
    if isinstance(value, bool) and bool not in allowed:
        return False
    if isinstance(value, dict) and not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return False
    return any(isinstance(value, t) for t in allowed)


def record_settings(checkpoint: Path, thread_id: str, settings: RunSettings) -> None:
    """Keep ``settings`` in the checkpoint file for ``thread_id`` (replacing an earlier record)."""
    text = json.dumps(settings.to_json(), sort_keys=True)
    with contextlib.closing(sqlite3.connect(str(checkpoint), timeout=10.0)) as conn, conn:
        conn.execute(f"CREATE TABLE IF NOT EXISTS {SETTINGS_TABLE} (thread_id TEXT PRIMARY KEY, settings TEXT)")
        conn.execute(f"INSERT OR REPLACE INTO {SETTINGS_TABLE} VALUES (?, ?)", (thread_id, text))


def recorded_settings(checkpoint: Path, thread_id: str) -> RunSettings | None:
    """The settings the run ``thread_id`` recorded in ``checkpoint``; None when it recorded none (a run of an
    earlier version, or no such run). ConfigError for a damaged record."""
    if not checkpoint.is_file():
        return None
    try:
        with contextlib.closing(sqlite3.connect(f"file:{checkpoint}?mode=ro", uri=True)) as conn:
            row = conn.execute(f"SELECT settings FROM {SETTINGS_TABLE} WHERE thread_id = ?", (thread_id,)).fetchone()
    except sqlite3.Error:  # not a database, or no settings table: nothing recorded
        return None
    if row is None:
        return None
    try:
        if not isinstance(row[0], str) or len(row[0]) > _MAX_SETTINGS_CHARS:
            raise ValueError("not a settings record")
        return RunSettings.from_json(json.loads(row[0]))
    except (ValueError, RecursionError) as e:
        raise ConfigError(f"--resume {thread_id}: the paused run's settings in {checkpoint} are damaged ({e}); "
                          "give every option of the paused run again") from e


#: option (argparse dest) -> (its flag, the RunSettings field it restores)
_OPTIONS: dict[str, tuple[str, str]] = {
    "instruction": ("the instruction", "instruction"), "task": ("--task", "task"), "seed": ("--seed", "seed"),
    "robot": ("--robot", "robot"), "camera": ("--camera", "camera"), "perception": ("--perception", "perception"),
    "backend": ("--backend", "backend"), "agent_backend": ("--agent-backend", "agent_backends"),
    "base_url": ("--base-url", "base_url"), "llm_model": ("--llm-model", "llm_model"),
    "vlm_model": ("--vlm-model", "vlm_model"), "llm_timeout": ("--llm-timeout", "llm_timeout_s"),
    "llm_decoding": ("--llm-decoding", "llm_decoding"), "no_reflector": ("--no-reflector", "reflector"),
    "single_agent": ("--single-agent", "single_agent"), "approve": ("--approve", "approve"),
    "dry_run": ("--dry-run", "dry_run"), "contingency": ("--contingency", "contingency"),
    "calibration": ("--calibration", "calibration"),
}


def _as_option(dest: str, value: Any) -> Any:
    """A recorded setting as the option's own value."""
    if dest == "no_reflector":
        return not value
    if dest == "agent_backend":
        return [f"{a}={b}" for a, b in sorted(value.items())] or None
    return value


def _same(dest: str, given: Any, restored: Any) -> bool:
    if dest == "agent_backend":
        def as_dict(items: Any) -> dict[str, str]:
            return {a.strip(): b.strip() for a, _, b in (i.partition("=") for i in items or [])}
        return as_dict(given) == as_dict(restored)
    if dest == "calibration" and given is not None and restored is not None:
        return bool(Path(given).resolve() == Path(restored).resolve())
    if dest == "seed":
        return (given or 0) == (restored or 0)
    return bool(given == restored)


def restore_options(settings: RunSettings, given: Mapping[str, Any], defaults: Mapping[str, Any],
                    thread_id: str) -> dict[str, Any]:
    """``given`` (option dest -> value) with every run option left at its default replaced by the paused run's.

    Raises ConfigError for an option given with a value other than the paused run's, and for a calibration file
    whose content changed since the run paused.
    """
    values = dict(given)
    recorded = settings.to_json()
    for dest, (flag, name) in _OPTIONS.items():
        restored = _as_option(dest, recorded[name])
        if dest not in given:
            continue
        if given[dest] == defaults.get(dest) or _same(dest, given[dest], restored):
            values[dest] = restored
            continue
        shown = restored if not isinstance(restored, bool) else ("on" if restored else "off")
        asked = given[dest] if not isinstance(given[dest], bool) else ("on" if given[dest] else "off")
        raise ConfigError(f"--resume {thread_id}: {flag} {asked!r} conflicts with the paused run's {shown!r}; a "
                          f"resumed run keeps the paused run's settings: leave {flag} out")
    if settings.calibration is not None and settings.calibration_sha256 is not None:
        from mallvi.robot_drivers.calibration.calibration_files import file_sha256

        try:
            now = file_sha256(settings.calibration)
        except OSError as e:
            raise ConfigError(f"--resume {thread_id}: the paused run's calibration {settings.calibration} cannot be "
                              f"read: {e.strerror or e}") from e
        if now != settings.calibration_sha256:
            raise ConfigError(f"--resume {thread_id}: the calibration {settings.calibration} changed since the run "
                              "paused; a run resumes with the calibration it started with (start a new run instead)")
    return values


def rewind_for_resume(checkpointer: Any, thread_id: str, *, with_reflector: bool, world_rebuilt: bool) -> None:
    """Make the paused thread look again before it acts: a re-scan (the Descriptor) or, without the Reflector,
    the Perceptor onwards; on a rebuilt world, from the first subtask once anything moved. A thread that is not
    paused in the middle of a subtask is left as it is."""
    from mallvi.graph.builder import build_graph

    graph = build_graph(with_reflector=with_reflector, checkpointer=checkpointer)
    config: Any = {"configurable": {"thread_id": thread_id}}
    snapshot = graph.get_state(config)
    state = snapshot.values
    if not snapshot.next or not state or state.get("status") != "running" or state.get("plan") is None:
        return
    update: dict[str, Any] = {"detections": {}, "localized": {}, "action_plan": None, "actor_report": None,
                              "stage_error": None}
    moved = any(getattr(r, "node", None) == "actor" for r in state.get("trail", []))
    if world_rebuilt and moved:  # the rebuilt world has undone every motion: the plan starts over
        update.update(subtask_index=0, attempts={}, rescans={}, total_attempts=0, failures={})
    if with_reflector:
        update["retry_from"] = "descriptor"
        graph.update_state(config, update, as_node="reflector")
    else:
        update["retry_from"] = "dispatch"
        graph.update_state(config, update, as_node="advance")
