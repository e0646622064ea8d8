"""The mallvi agent: the agent graph (or its no-Reflector ablation) on the benchmark's world, through the one run
path (``orchestration.run_instruction.run_on_station``) that ``mallvi run`` and the rig take."""

from __future__ import annotations

import logging
from typing import Any

from mallvi.bench.agents.agent_protocols import EpisodeStats
from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld
from mallvi.contracts.station import Station
from mallvi.tracing.trace import TraceWriter

log = logging.getLogger(__name__)


class GraphAgent:
    """Runs the task's instruction through the graph with the configured backends and perception.

    The benchmark judges the episode by its task's check; the run is not judged here.
    """

    def __init__(self, cfg: BenchConfig, reflector: bool = True) -> None:
        from mallvi.orchestration.run_instruction import GraphSession

        self.run_cfg = cfg.run_config(reflector=reflector)
        self.session = GraphSession.from_config(self.run_cfg)
        self.backends = self.session.backends
        self.port = self.session.perception
        self.budgets = self.session.budgets  # retries matched to the fault level, exactly as `mallvi run` does
        self.reflector = reflector
        self.station = cfg.station
        self.calibration = cfg.calibration

    def run_episode(self, task: BenchTask, world: BenchWorld, trace: TraceWriter) -> EpisodeStats:
        from mallvi.orchestration.run_instruction import fault_event_writer
        from mallvi.sim_bridge.sim_station import SimStation

        w: Any = world  # the simulator's truth model backs object names, as in `mallvi run`
        if getattr(w, "faults", None) is not None:
            w.faults.listeners.append(fault_event_writer(trace))  # injected faults reach the trace as they happen
        station: Station
        if self.station == "twin":
            from mallvi.twin.twin_station import TwinStation

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
        from mallvi.orchestration.run_instruction import run_on_station

        instruction = getattr(w, "instruction", "") or task.instruction
        result = run_on_station(station, self.session, self.run_cfg, instruction, task=task.name,
                                seed=int(getattr(w, "seed", 0) or 0), trace=trace, judged=False, record_start=False)
        stats = EpisodeStats(turns=result.transitions, actions=result.actor_steps)
        stats.extra.update(
            graph_success=result.graph_success, graph_status=result.graph_status, subtasks=list(result.subtasks),
            llm_calls=result.llm_calls, station=result.station, privileged=list(result.privileged),
            attempts=dict(result.attempts), failure_report=result.failure_report,
        )  # fmt: skip
        if result.refusal:
            stats.extra["message"] = result.refusal
            stats.extra["refusal_cause"] = result.refusal_cause
        return stats
