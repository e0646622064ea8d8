"""The one run path: an instruction through the agent graph on a Station, judged, recorded, as a ``RunResult``.

``run`` serves ``mallvi run`` and ``mallvi demo`` on every Station (simulator, twin, rig): it refuses what the
Station cannot honour (``stations.check_options``), opens the Station, and hands it to ``run_on_station``.
The benchmark's graph agent opens its Station over the episode's world and calls ``run_on_station`` itself, with
a ``GraphSession`` built once per worker.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from mallvi.config import Budgets, ConfigError, RunConfig
from mallvi.contracts.station import Station
from mallvi.graph.assemble import build_context, run_start_fields
from mallvi.graph.backends.backend_protocols import AgentBackends
from mallvi.graph.drive import Decider, GraphOutcome, drive
from mallvi.graph.perception_adapter import PipelinePort
from mallvi.graph.state import GraphState
from mallvi.orchestration.fault_budgets import budgets_for_contingency
from mallvi.orchestration.judge import GRAPH_BELIEF, SuccessCheck, judge
from mallvi.orchestration.result import RunResult, run_status
from mallvi.orchestration.resume import RunSettings, record_settings, rewind_for_resume
from mallvi.orchestration.stations import RIG_TASK, RigAccess, RunRequest, check_options, check_video, open_station
from mallvi.tracing.trace import TraceWriter

log = logging.getLogger(__name__)

RIG_SUCCESS_SOURCE = "graph belief (real rig: no ground truth)"

__all__ = ["GraphSession", "RigAccess", "RunRequest", "fault_event_writer", "run", "run_on_station"]


@dataclass(frozen=True)
class GraphSession:
    """What a run's graph is made of besides the Station: the agents' backends, perception and retry budgets.

    Built once per ``mallvi run`` and once per benchmark worker (the backends keep their model clients).
    """

    backends: AgentBackends
    perception: PipelinePort
    budgets: Budgets

    @staticmethod
    def from_config(cfg: RunConfig) -> GraphSession:
        """Backends, perception and budgets (matched to the fault level) of ``cfg``; ConfigError for bad ones."""
        from mallvi.graph.backends.factory import make_backends
        from mallvi.perception.pipeline import make_perception
        from mallvi.sim_bridge.contingency_profile import ContingencySpecError

        backends = make_backends(cfg)
        try:
            perception = PipelinePort(make_perception(cfg.perception))
        except ValueError as e:  # e.g. neural perception without model locations
            raise ConfigError(f"--perception {cfg.perception}: {e}") from e
        try:
            budgets = budgets_for_contingency(cfg.contingency, cfg.budgets)
        except ContingencySpecError as e:
            raise ConfigError(f"--contingency: {e}") from e
        return GraphSession(backends=backends, perception=perception, budgets=budgets)


def run(
    request: RunRequest,
    cfg: RunConfig,
    *,
    catalog: Any | None = None,
    decide: Decider | None = None,
    progress: Callable[[str], None] | None = None,
    rig: RigAccess | None = None,
    video: bool = False,
    trace_images: str = "all",
    trace_state: str = "full",
) -> RunResult:
    """Run ``request`` on the Station ``cfg`` names and judge it.

    ``video``: record the head camera of a simulated Station (simulator or twin) into the trace's ``video/``
    (``mallvi.tracing.video``); ``trace_images``/``trace_state``: what the trace keeps (``TraceWriter``).

    ``catalog`` (a ``SceneCatalog``) holds the scenes a simulator or twin run may name and their success checks
    (``mallvi.bench.task_scenes`` adds the benchmark's); without one, the simulator's built-in scenes, judged by
    the goal predicates. ConfigError for an option the Station cannot honour, before anything is built;
    DriverError when the rig does not come up.
    """
    if video:
        check_video(cfg, request.trace_dir)  # before any file is read
    kind = check_options(cfg, request)
    trace: TraceWriter | None = None
    if request.trace_dir is not None:
        try:
            trace = TraceWriter(request.trace_dir, images=trace_images, state=trace_state)
        except ValueError as e:
            raise ConfigError(str(e)) from e
    t_start = time.perf_counter()
    try:
        session = GraphSession.from_config(cfg)
        opened = open_station(kind, cfg, request, session.perception.world_model, catalog=catalog, rig=rig)
    except BaseException:
        if trace is not None:
            trace.close()
        raise
    recording = contextlib.ExitStack()
    try:
        if trace is not None and opened.fault_listeners is not None:
            opened.fault_listeners.append(fault_event_writer(trace))
        instruction = request.instruction if request.instruction is not None else opened.instruction
        task = request.task if request.task is not None else RIG_TASK
        checkpointer = None
        if request.checkpoint is not None:
            from mallvi.graph.checkpoint import sqlite_saver

            checkpointer = sqlite_saver(request.checkpoint)
            if request.resume_thread is not None and not cfg.single_agent:  # look again before acting
                rewind_for_resume(checkpointer, request.resume_thread, with_reflector=cfg.reflector,
                                  world_rebuilt=kind != "rig")
        if video and request.trace_dir is not None:
            from mallvi.tracing.video import record_world_video

            world, camera = _video_source(opened.station)
            recording.enter_context(record_world_video(world, request.trace_dir, trace, camera))
        result = run_on_station(
            opened.station, session, cfg, instruction, task=task, seed=request.seed or 0, trace=trace,
            own_instruction=request.instruction is None, success_check=opened.success_check,
            checkpointer=checkpointer, resume_thread=request.resume_thread, decide=decide, progress=progress,
            t_start=t_start,
        )
        recording.close()  # the video is finished (and its event written) before the run's end
        result.faults_injected = len(opened.faults())
        if request.checkpoint is not None and result.thread_id:  # what `--resume` restores
            record_settings(request.checkpoint, result.thread_id,
                            RunSettings.of(request.instruction, request.task, request.seed, request.calibration, cfg))
        if kind == "rig":
            result.success_source = RIG_SUCCESS_SOURCE
        if trace is not None:
            result.trace = str(request.trace_dir)
            trace.emit("run_end", status=result.status, success=result.success, graph_success=result.graph_success,
                       wall_s=result.wall_s, failure_report=result.failure_report or result.refusal,
                       graph_status=result.graph_status, thread_id=result.thread_id)
        return result
    finally:
        recording.close()
        if trace is not None:
            trace.close()
        opened.close()


def _video_source(station: Station) -> tuple[Any, str]:
    """The simulated world behind a simulator or twin Station, and the camera to record (its head camera)."""
    world = getattr(station, "sim", None)
    if world is None:
        world = getattr(getattr(station, "twin", None), "world", None)
    names = list(getattr(world, "camera_names", []) or [])
    if world is None or not names:
        raise ConfigError("--video needs a simulated camera; this Station has none")
    return world, "head" if "head" in names else names[0]


def run_on_station(
    station: Station,
    session: GraphSession,
    cfg: RunConfig,
    instruction: str,
    *,
    task: str,
    seed: int,
    trace: TraceWriter | None = None,
    own_instruction: bool = False,
    success_check: SuccessCheck | None = None,
    judged: bool = True,
    record_start: bool = True,
    checkpointer: Any | None = None,
    resume_thread: str | None = None,
    decide: Decider | None = None,
    progress: Callable[[str], None] | None = None,
    t_start: float | None = None,
) -> RunResult:
    """The graph (or the single-planner ablation) on ``station`` to its end, a pause or a dry run's first motion.

    ``own_instruction``: ``instruction`` is the scene's own, judged by ``success_check``. ``judged=False`` leaves
    the judgement to the caller (the benchmark checks its task itself; ``success`` is then the graph's belief).
    ``record_start=False``: the caller has written the trace's ``run_start`` event. The caller writes
    ``run_end`` and closes the trace and the Station.
    """
    t0 = time.perf_counter() if t_start is None else t_start
    ctx = build_context(station, session.perception, session.backends, budgets=session.budgets, trace=trace,
                        approve=cfg.approve, reflector_enabled=cfg.reflector, on_progress=progress,
                        privileged_perception=cfg.perception == "sim", action_space=cfg.action_space)
    callbacks: list[BaseCallbackHandler] = []
    if trace is not None:
        from mallvi.tracing.capture import TraceCallbackHandler

        callbacks.append(TraceCallbackHandler(trace))
        if record_start:
            trace.emit("run_start", instruction=instruction, task=task, seed=seed,
                       config={"backend": cfg.backend, "perception": cfg.perception, "robot": cfg.robot,
                               "reflector": cfg.reflector, "single_agent": cfg.single_agent, "approve": cfg.approve,
                               "action_space": cfg.action_space},
                       **run_start_fields(ctx))
    outcome, state = _drive(ctx, instruction, cfg, callbacks, checkpointer, resume_thread, decide)
    if judged:
        success, source, checks = judge(station, None if own_instruction else instruction, success_check, state,
                                        outcome)
    else:
        success, source, checks = outcome.graph_success, GRAPH_BELIEF, []
    plan = state["action_plan"]
    return RunResult(
        instruction=instruction, task=task, seed=seed, success=success, success_source=source,
        graph_success=outcome.graph_success, status=run_status(outcome.status, success), graph_status=outcome.status,
        goal=outcome.goal, goal_check=checks,
        subtasks=outcome.subtasks, attempts=outcome.attempts, llm_calls=outcome.llm_calls.model_dump(),
        wall_s=time.perf_counter() - t0, graph_s=outcome.wall_s, node_time_s=outcome.node_time_s,
        transitions=outcome.transitions, actor_steps=sum(1 for n in outcome.node_sequence if n == "actor"),
        failure_report=outcome.failure_report.model_dump(mode="json") if outcome.failure_report else None,
        refusal=outcome.refusal, refusal_cause=outcome.refusal_cause, thread_id=outcome.thread_id,
        planned_calls=[c.model_dump(mode="json") for c in plan.calls]
        if outcome.status == "planned" and plan is not None else [],
        station=ctx.station, privileged=list(ctx.privileged),
    )


def _drive(ctx: Any, instruction: str, cfg: RunConfig, callbacks: Sequence[BaseCallbackHandler],
           checkpointer: Any | None, resume_thread: str | None,
           decide: Decider | None) -> tuple[GraphOutcome, GraphState]:
    if cfg.single_agent:
        from mallvi.graph.single_planner import drive_single

        return drive_single(ctx, instruction, callbacks=callbacks)
    outcome, state = drive(ctx, instruction, with_reflector=cfg.reflector, checkpointer=checkpointer,
                           thread_id=resume_thread, resume=resume_thread is not None, callbacks=callbacks,
                           decide=decide, interrupt_before_actor=cfg.dry_run)
    if cfg.dry_run and outcome.status == "paused":
        outcome = outcome.model_copy(update={"status": "planned"})
    return outcome, state


def fault_event_writer(trace: TraceWriter) -> Callable[[dict[str, Any]], None]:
    """A fault-injector listener that writes each injected fault as a ``fault_injected`` event when it happens."""

    def write(fault: dict[str, Any]) -> None:
        try:
            trace.emit("fault_injected", skill=fault.get("skill"), fault=fault.get("kind"), detail=fault)
        except ValueError as e:  # the trace is already closed
            log.debug("fault event dropped: %s", e)

    return write

