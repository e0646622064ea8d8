"""``mallvi run --robot piper --camera realsense``: the graph on the real rig (two Pipers, a RealSense).

The run is the graph on a ``RigStation``. Object names resolve through what perception saw (the perception
port's world model), not through any simulator; success is the graph's own belief (``success_source`` says so),
since a rig has no success oracle.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mallvi.config import ConfigError, RunConfig
from mallvi.graph.assemble import build_context, run_start_fields
from mallvi.graph.perception_adapter import PipelinePort
from mallvi.graph.runner import Decider, drive
from mallvi.graph.sim_run import RunResult
from mallvi.tracing.trace import TraceWriter


def run_on_rig(
    instruction: str,
    cfg: RunConfig,
    calibration_path: str | Path,
    *,
    trace_dir: str | Path | None = None,
    decide: Decider | None = None,
    progress: Callable[[str], None] | None = None,
    rig_overrides: dict[str, Any] | None = None,
    camera_source: object | None = None,
) -> RunResult:
    """Connect the rig, run the graph, disconnect. ``rig_overrides`` are RigConfig fields (tests: virtual CAN)."""
    from mallvi.graph.backends.factory import make_backends
    from mallvi.perception.pipeline import make_perception
    from mallvi.robot_drivers.calibration_io import CalibrationFileError
    from mallvi.robot_drivers.rig import RigConfig
    from mallvi.robot_drivers.rig_station import RigStation

    if cfg.perception == "sim":
        raise ConfigError("--perception sim needs the simulator; use color or neural on the real rig")
    t_start = time.perf_counter()
    try:
        port = PipelinePort(make_perception(cfg.perception))
        rig_cfg = RigConfig(calibration_path=str(calibration_path), dry_run=cfg.dry_run, **(rig_overrides or {}))
        station = RigStation.connect(rig_cfg, port.world_model(), camera_source=camera_source)
    except (CalibrationFileError, ValueError) as e:
        raise ConfigError(str(e)) from e
    trace = TraceWriter(trace_dir) if trace_dir is not None else None
    try:
        ctx = build_context(station, port, make_backends(cfg), budgets=cfg.budgets, trace=trace,
                            approve=cfg.approve, reflector_enabled=cfg.reflector, on_progress=progress)
        callbacks = []
        if trace is not None:
            from mallvi.tracing.capture import TraceCallbackHandler

            callbacks.append(TraceCallbackHandler(trace))
            trace.emit("run_start", instruction=instruction, task="real_rig", seed=0,
                       config={"backend": cfg.backend, "perception": cfg.perception, "robot": "piper"},
                       **run_start_fields(ctx))
        outcome, _ = drive(ctx, instruction, with_reflector=cfg.reflector, callbacks=callbacks, decide=decide)
        result = RunResult(
            instruction=instruction, task="real_rig", seed=0, success=outcome.graph_success,
            success_source="graph belief (real rig: no ground truth)", graph_success=outcome.graph_success,
            status=outcome.status, goal=outcome.goal, subtasks=outcome.subtasks, attempts=outcome.attempts,
            llm_calls=outcome.llm_calls.model_dump(), wall_s=time.perf_counter() - t_start, graph_s=outcome.wall_s,
            node_time_s=outcome.node_time_s, transitions=outcome.transitions,
            trace=str(trace_dir) if trace_dir is not None else None,
            failure_report=outcome.failure_report.model_dump(mode="json") if outcome.failure_report else None,
            refusal=outcome.refusal, refusal_cause=outcome.refusal_cause, thread_id=outcome.thread_id,
            station=ctx.station,
            privileged=list(ctx.privileged),
        )
        if trace is not None:
            trace.emit("run_end", status=result.status, success=result.success, graph_success=result.graph_success,
                       wall_s=result.wall_s, failure_report=result.failure_report or result.refusal)
        return result
    finally:
        if trace is not None:
            trace.close()
        station.close()
