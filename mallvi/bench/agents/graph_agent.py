"""The mallvi agent: the full LangGraph controller (or its no-Reflector ablation) on the benchmark's world."""

from __future__ import annotations

import logging
from typing import Any

from mallvi.bench.agents.base import EpisodeStats
from mallvi.bench.config import BenchConfig
from mallvi.bench.tasks.base import BenchTask, BenchWorld
from mallvi.contracts.station import Station
from mallvi.tracing.trace import TraceWriter

log = logging.getLogger(__name__)


class GraphAgent:
    """Runs the task's instruction through ``mallvi.graph`` with the configured backends and perception."""

    def __init__(self, cfg: BenchConfig, reflector: bool = True) -> None:
        from mallvi.config import LlmConfig, RunConfig
        from mallvi.graph.backends.factory import make_backends
        from mallvi.graph.fault_budgets import budgets_for_contingency
        from mallvi.graph.perception_adapter import PipelinePort
        from mallvi.perception.pipeline import make_perception

        llm = LlmConfig.from_env(cfg.llm.get("base_url"), cfg.llm.get("model"), cfg.llm.get("vlm_model"))
        backend = "llm" if cfg.backend == "llm" else "rules"
        perception = {"sim": "sim", "neural": "neural"}.get(cfg.perception, "color")
        self.run_cfg = RunConfig(backend=backend, perception=perception, reflector=reflector, llm=llm)  # type: ignore[arg-type]
        self.backends = make_backends(self.run_cfg)
        self.port = PipelinePort(make_perception(cfg.perception))
        self.reflector = reflector
        self.station = cfg.station
        self.calibration = cfg.calibration
        # retries matched to the fault level, exactly as `mallvi run --contingency` does
        self.budgets = budgets_for_contingency(cfg.contingency, self.run_cfg.budgets)

    def run_episode(self, task: BenchTask, world: BenchWorld, trace: TraceWriter) -> EpisodeStats:
        from mallvi.graph.sim_run import fault_event_writer
        from mallvi.sim_bridge.station import SimStation

        w: Any = world  # the simulator's truth model backs object names, as in `mallvi run`
        if getattr(w, "faults", None) is not None:
            w.faults.listeners.append(fault_event_writer(trace))  # injected faults reach the trace as they happen
        station: Station
        if self.station == "twin":
            from mallvi.sim_bridge.twin_station import TwinStation

            assert self.calibration is not None  # BenchConfig checks it
            station = TwinStation.on_world(w, self.calibration, self.port.world_model())
        else:
            station = SimStation(w, main_camera=self.run_cfg.camera_name)  # the runner closes the world
        try:
            return self._drive(station, task, w, trace)
        finally:
            if self.station == "twin":
                station.close()  # the twin's drivers and camera; the runner closes the world

    def _drive(self, station: Station, task: BenchTask, w: Any, trace: TraceWriter) -> EpisodeStats:
        from mallvi.graph.assemble import build_context
        from mallvi.graph.runner import drive
        from mallvi.tracing.capture import TraceCallbackHandler

        ctx = build_context(station, self.port, self.backends, budgets=self.budgets, trace=trace,
                            reflector_enabled=self.reflector, privileged_perception=self.run_cfg.perception == "sim")
        instruction = getattr(w, "instruction", "") or task.instruction
        outcome, _state = drive(ctx, instruction, with_reflector=self.reflector,
                                callbacks=[TraceCallbackHandler(trace)])  # fmt: skip
        stats = EpisodeStats(turns=outcome.transitions)
        stats.actions = sum(1 for n in outcome.node_sequence if n == "actor")
        stats.extra.update(
            graph_success=outcome.graph_success, graph_status=outcome.status, subtasks=list(outcome.subtasks),
            llm_calls=outcome.llm_calls.model_dump(), station=ctx.station, privileged=list(ctx.privileged),
            attempts=dict(outcome.attempts),
            failure_report=outcome.failure_report.model_dump(mode="json") if outcome.failure_report else None,
        )  # fmt: skip
        if outcome.refusal:
            stats.extra["message"] = outcome.refusal
        return stats
