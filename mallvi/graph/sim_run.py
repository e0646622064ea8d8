"""``mallvi run`` in the simulator: world + perception + backends -> graph run -> RunResult judged by truth.

``success`` comes from simulator truth: with no instruction, the scene's own instruction and its benchmark
success check; with a free instruction, the Decomposer's goal predicates evaluated on the final scene (object
references resolved against the simulator's objects independently of perception). ``graph_success`` is the
graph's own belief.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from mallvi.config import ConfigError, RunConfig
from mallvi.contracts.geometry import ARM_SIDES
from mallvi.contracts.station import Station
from mallvi.contracts.world_model import WorldModel
from mallvi.graph.assemble import build_context, run_start_fields
from mallvi.graph.goals import PredicateResult, centre_of, evaluate, truth_boxes
from mallvi.graph.refs import plan_refs
from mallvi.graph.runner import Decider, GraphOutcome, drive
from mallvi.graph.schemas import ObjectRef
from mallvi.graph.state import GraphState
from mallvi.tracing.trace import TraceWriter

if TYPE_CHECKING:  # the simulator is imported when a run starts, not with this module
    from mallvi.graph.perception_adapter import PipelinePort
    from mallvi.sim_bridge.catalog import SceneCatalog, SuccessCheck
    from mallvi.sim_bridge.scene_spec import SceneSpec
    from mallvi.sim_bridge.world import SimWorld

log = logging.getLogger(__name__)


class NotAvailableError(ConfigError):
    """An option this build cannot honour (e.g. a real robot driver that is not there)."""


class RunResult(BaseModel):
    """The outcome of one ``mallvi run`` (the ``--json`` object)."""

    instruction: str
    task: str
    seed: int
    success: bool
    success_source: str
    graph_success: bool
    status: str
    goal: list[str] = Field(default_factory=list)
    goal_check: list[PredicateResult] = Field(default_factory=list)
    subtasks: list[str] = Field(default_factory=list)
    attempts: dict[str, int] = Field(default_factory=dict)
    llm_calls: dict[str, Any] = Field(default_factory=dict)
    wall_s: float
    graph_s: float
    node_time_s: float
    transitions: int
    trace: str | None = None
    failure_report: dict[str, Any] | None = None
    refusal: str | None = None
    refusal_cause: str | None = Field(default=None, description='"input" (bad input) or "model" (the endpoint)')
    thread_id: str | None = None
    planned_calls: list[dict[str, Any]] = Field(default_factory=list, description="dry run: the first skill calls")
    faults_injected: int = 0
    station: str = ""
    privileged: list[str] = Field(default_factory=list, description="the Station's inputs a rig would not have")

    @property
    def exit_code(self) -> int:
        if self.status == "refused":
            return 2
        return 0 if self.success or self.status == "planned" else 1


def check_available(cfg: RunConfig) -> None:
    """Refuse options whose implementation is not in this build, before anything is created."""
    if cfg.robot == "twin":
        if cfg.perception == "sim":
            raise ConfigError("--perception sim reads the simulator; the twin perceives like a rig: color or neural")
    elif cfg.robot != "sim" or cfg.camera != "sim":
        raise NotAvailableError(f"--robot {cfg.robot} with --camera {cfg.camera}: mixing the simulator and the "
                                "real rig is not supported; use --robot sim --camera sim or --robot piper "
                                "--camera realsense")
    if cfg.single_agent and cfg.approve:
        raise ConfigError("--single-agent and --approve cannot be combined")


def run_in_sim(
    instruction: str | None,
    task: str,
    seed: int,
    cfg: RunConfig,
    *,
    trace_dir: str | Path | None = None,
    decide: Decider | None = None,
    progress: Callable[[str], None] | None = None,
    checkpoint_path: str | Path | None = None,
    resume_thread: str | None = None,
    catalog: SceneCatalog | None = None,
    twin_calibration: str | Path | None = None,
) -> RunResult:
    """Build the scene, run the graph on it and judge the result by simulator truth.

    ``catalog`` holds the scenes ``task`` may name and their success checks (``mallvi.bench.catalog`` adds the
    benchmark's); without one, only the simulator's built-in scenes, judged by the goal predicates. With
    ``cfg.robot == "twin"`` the Station is the rig's over the simulated twin (``TwinStation``), whose drivers and
    camera use ``twin_calibration``.
    """
    check_available(cfg)
    t_start = time.perf_counter()
    from mallvi.sim_bridge.catalog import builtin_catalog

    try:
        entry = (catalog if catalog is not None else builtin_catalog()).get(task)
    except KeyError as e:
        raise ConfigError(str(e)) from e
    from mallvi.graph.backends.factory import make_backends
    from mallvi.graph.perception_adapter import PipelinePort
    from mallvi.perception.pipeline import make_perception
    from mallvi.sim_bridge.world import SimWorld

    backends = make_backends(cfg)
    try:
        perception = PipelinePort(make_perception(cfg.perception))
    except ValueError as e:  # e.g. neural perception without model locations
        raise ConfigError(f"--perception {cfg.perception}: {e}") from e
    create_kw: dict[str, Any] = {}
    if cfg.contingency not in (None, "none"):
        create_kw["contingency"] = cfg.contingency
    from mallvi.graph.fault_budgets import budgets_for_contingency
    from mallvi.sim_bridge.contingency_profile import ContingencySpecError

    station: Station
    try:
        budgets = budgets_for_contingency(cfg.contingency, cfg.budgets)
        if cfg.robot == "twin":
            station, world = _open_twin_station(entry.spec, seed, cfg, twin_calibration, perception)
        else:
            from mallvi.sim_bridge.station import SimStation

            world = SimWorld.create(entry.spec, seed, **create_kw)
            station = SimStation(world, main_camera=cfg.camera_name)
    except ContingencySpecError as e:
        raise ConfigError(f"--contingency: {e}") from e
    trace = TraceWriter(trace_dir) if trace_dir is not None else None
    if trace is not None and world.faults is not None:
        world.faults.listeners.append(fault_event_writer(trace))
    try:
        text = instruction if instruction is not None else world.instruction
        ctx = build_context(station, perception, backends, budgets=budgets, trace=trace, approve=cfg.approve,
                            reflector_enabled=cfg.reflector, on_progress=progress,
                            privileged_perception=cfg.perception == "sim")
        callbacks = []
        if trace is not None:
            from mallvi.tracing.capture import TraceCallbackHandler

            callbacks.append(TraceCallbackHandler(trace))
            trace.emit("run_start", instruction=text, task=task, seed=seed,
                       config={"backend": cfg.backend, "perception": cfg.perception, "robot": cfg.robot,
                               "reflector": cfg.reflector,
                               "single_agent": cfg.single_agent, "approve": cfg.approve},
                       **run_start_fields(ctx))
        checkpointer = None
        if checkpoint_path is not None:
            from mallvi.graph.checkpoint import sqlite_saver

            checkpointer = sqlite_saver(checkpoint_path)
        if cfg.single_agent:
            from mallvi.graph.single_agent import drive_single

            outcome, state = drive_single(ctx, text, callbacks=callbacks)
        else:
            outcome, state = drive(ctx, text, with_reflector=cfg.reflector, checkpointer=checkpointer,
                                   thread_id=resume_thread, resume=resume_thread is not None, callbacks=callbacks,
                                   decide=decide, interrupt_before_actor=cfg.dry_run)
        if cfg.dry_run and outcome.status == "paused":
            outcome = outcome.model_copy(update={"status": "planned"})
        success, source, checks = judge_truth(station, instruction, entry.success, state, outcome)
        result = RunResult(
            instruction=text, task=task, seed=seed, success=success, success_source=source,
            graph_success=outcome.graph_success, status=outcome.status, goal=outcome.goal, goal_check=checks,
            subtasks=outcome.subtasks, attempts=outcome.attempts, llm_calls=outcome.llm_calls.model_dump(),
            wall_s=time.perf_counter() - t_start, graph_s=outcome.wall_s, node_time_s=outcome.node_time_s,
            transitions=outcome.transitions, trace=str(trace_dir) if trace_dir is not None else None,
            failure_report=outcome.failure_report.model_dump(mode="json") if outcome.failure_report else None,
            refusal=outcome.refusal, refusal_cause=outcome.refusal_cause, thread_id=outcome.thread_id,
            planned_calls=[c.model_dump(mode="json") for c in plan.calls]
            if outcome.status == "planned" and (plan := state["action_plan"]) is not None else [],
            station=ctx.station, privileged=list(ctx.privileged),
        )
        faults = list(getattr(world, "injected_faults", []))
        result.faults_injected = len(faults)
        if trace is not None:
            trace.emit("run_end", status=result.status, success=result.success, graph_success=result.graph_success,
                       wall_s=result.wall_s, failure_report=result.failure_report or result.refusal)
        return result
    finally:
        if trace is not None:
            trace.close()
        station.close()


def _open_twin_station(scene: SceneSpec, seed: int, cfg: RunConfig, calibration: str | Path | None,
                       perception: PipelinePort) -> tuple[Station, SimWorld]:
    """The rig's Station over the twin of (task, seed), with the drivers and camera calibrated by ``calibration``."""
    from mallvi.robot_drivers.calibration_io import CalibrationFileError
    from mallvi.sim_bridge.twin_station import TwinStation

    if calibration is None:
        raise ConfigError("the twin needs --calibration FILE (from `mallvi calibrate --robot twin`)")
    contingency = cfg.contingency if cfg.contingency not in (None, "none") else None
    try:
        station = TwinStation.open(scene, seed, calibration, perception.world_model(), dry_run=cfg.dry_run,
                                   contingency=contingency)
    except (CalibrationFileError, ValueError) as e:
        raise ConfigError(str(e)) from e
    return station, station.twin.world


def fault_event_writer(trace: TraceWriter) -> Callable[[dict[str, Any]], None]:
    """A FaultInjector listener that writes each injected fault as a ``fault_injected`` event when it happens."""

    def write(fault: dict[str, Any]) -> None:
        try:
            trace.emit("fault_injected", skill=fault.get("skill"), fault=fault.get("kind"), detail=fault)
        except ValueError as e:  # the trace is already closed
            log.debug("fault event dropped: %s", e)

    return write


def judge_truth(station: Station, instruction: str | None, success_check: SuccessCheck | None, state: GraphState,
                outcome: GraphOutcome) -> tuple[bool, str, list[PredicateResult]]:
    """(success, where the judgement comes from, predicate checks) from the Station's success oracle.

    The scene's own instruction (``instruction`` None) is judged by its ``success_check`` when it has one.
    """
    oracle = station.oracle
    if outcome.status in ("refused", "paused", "planned"):
        return False, "not run", []
    if oracle is None:
        return outcome.graph_success, "graph belief (no success oracle)", []
    if instruction is None:
        if success_check is not None:
            return oracle.check(success_check), "simulator: task success check", []
        log.info("this scene has no success check; using the goal predicates")
    plan = state["plan"]
    if plan is None or not plan.goal:
        return False, "simulator: no goal predicates", []
    refs = plan_refs(plan)
    boxes, errors = truth_boxes(refs, oracle.truth)
    names = {key: _truth_name(oracle.truth, ref) for key, ref in refs.items()}
    held_by_arm: dict[str, str | None] = {arm: oracle.held_object(arm) for arm in ARM_SIDES}

    def held(arm: str) -> str | None:
        name = held_by_arm.get(arm)
        return next((k for k, n in names.items() if n == name), None) if name else None

    checks = evaluate(plan.goal, boxes, station.table_top_z_m, held=held)
    for key, msg in errors.items():
        checks.append(PredicateResult(predicate=f"resolve({key})", holds=False, detail=msg))
    return all(c.holds for c in checks), "simulator: goal predicates", checks


def _truth_name(truth: WorldModel, ref: ObjectRef) -> str | None:
    """The simulator's name of the object ``ref`` resolves to (nearest centre), None when it resolves to none."""
    boxes, _ = truth_boxes({"x": ref}, truth)
    if "x" not in boxes:
        return None
    c = boxes["x"].centre_m
    return min(truth.object_names(),
               key=lambda n: sum((a - b) ** 2 for a, b in zip(centre_of(truth.get_object(n)), c, strict=True)))
