"""One benchmark episode: build the world for (task, seed), let the agent act, judge by simulator truth."""

from __future__ import annotations

import contextlib
import logging
import shutil
import time
import traceback
from pathlib import Path
from typing import Any

from mallvi.bench.agents.agent_protocols import EpisodeStats
from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.cost import CostClock, cost_record, instrument_agent, instrument_world, thread_queue_s
from mallvi.bench.loop import run_fine, run_grounding, run_planning
from mallvi.bench.loop_paper import run_fine_paper, run_planning_paper
from mallvi.bench.reuse import reuse_renders, reuse_scans
from mallvi.bench.tasks import BenchTask, get_task
from mallvi.bench.tasks.grounding import GroundingTask
from mallvi.robot_drivers.calibration.calibration_yaml import CalibrationFileError
from mallvi.sim_bridge.scene_spec import SceneSetupError
from mallvi.tracing.trace import TraceWriter
from mallvi.tracing.video import record_world_video

log = logging.getLogger(__name__)


def trace_dir(out_dir: str | Path, task: str, seed: int) -> Path:
    return Path(out_dir) / "traces" / task / str(seed)


def make_agent(cfg: BenchConfig, task: BenchTask) -> Any:
    """The agent object for ``cfg.agent`` (its interface depends on the tier; see agents/base.py)."""
    if cfg.agent == "expert":
        from mallvi.bench.agents.expert import ExpertAgent

        return ExpertAgent(semantics=cfg.single_protocol)
    if cfg.agent == "single":
        from mallvi.bench.agents.single_agent import SingleAgent

        return SingleAgent.from_config(cfg)
    if isinstance(task, GroundingTask) and cfg.backend == "llm":
        from mallvi.bench.agents.single_agent import SingleAgent

        return SingleAgent.from_config(cfg)  # the graph's VLM answers from the head image
    if isinstance(task, GroundingTask):
        from mallvi.bench.agents.grounding_rules import PerceptionGrounder

        return PerceptionGrounder(cfg.perception)
    from mallvi.bench.agents.graph_agent import GraphAgent

    return GraphAgent(cfg, reflector=cfg.agent == "mallvi")


def preload(cfg: BenchConfig) -> None:
    """Import the simulator and ``cfg``'s agent, building nothing: what an episode imports on first use, so a
    worker forked after this starts with them (``runner.pool_context``)."""
    import importlib

    agent = {"expert": "expert", "single": "single_agent"}.get(cfg.agent, "graph_agent")
    for module in ("mallvi.sim_bridge.world", f"mallvi.bench.agents.{agent}"):
        importlib.import_module(module)


def needs_render(cfg: BenchConfig, task: BenchTask) -> bool:
    """The expert reads truth only; everything else looks at images (and a video needs a camera)."""
    return cfg.agent != "expert" or cfg.save_images or cfg.video


def run_episode(cfg: BenchConfig, task_name: str, seed: int, out_dir: str | Path) -> dict[str, Any]:
    """Run one episode and return its record for episodes.jsonl (never raises for an agent or skill failure).

    Raises CalibrationFileError when the twin's calibration cannot serve the episode (changed since the run
    started, or refused by the station): a fault of the run, not of the agent, so nothing is recorded for it.
    """
    from mallvi.sim_bridge.world import SimWorld

    if cfg.station == "twin":
        check_calibration_unchanged(cfg)
    task = get_task(task_name)
    t0, cpu0, queue0 = time.perf_counter(), time.process_time(), thread_queue_s()
    clock = CostClock()
    tdir = trace_dir(out_dir, task_name, seed)
    if tdir.exists():
        shutil.rmtree(tdir)  # a half-written trace from an interrupted run
    record: dict[str, Any] = {"task": task_name, "seed": seed, "agent": cfg.agent, "tier": task.tier}
    seed_global_rngs(seed)
    try:
        with clock.phase("setup"):
            world = SimWorld.create(
                task.scene_spec(cfg.randomization), seed, render=needs_render(cfg, task), wrist_cameras=True,
                grasp_refusal_threshold_m=task.allocation_threshold_m, **_contingency_kw(cfg),
            )  # fmt: skip
    except SceneSetupError as e:
        record.update(status="skipped", success=False, score=None, message=str(e), wall_s=time.perf_counter() - t0)
        return record
    record["randomization"] = world.metadata.get("domain")
    if cfg.reuse:
        reuse_renders(world)
    instrument_world(clock, world)
    try:
        with TraceWriter(tdir, images=cfg.trace_images) as trace, contextlib.ExitStack() as recording:
            record.update(station_record(cfg))  # an agent may refine them
            trace.emit("run_start", instruction=task.instruction, task=task_name, seed=seed, config=cfg.to_json(),
                       station=record["station"], privileged=record["privileged"])
            if cfg.save_images and "head" in getattr(world, "camera_names", []):
                trace.save_image("head_initial", world.observe("head").rgb, node="bench")
            if cfg.video and "head" in getattr(world, "camera_names", []):
                recording.enter_context(record_world_video(world, tdir, trace))
            with clock.phase("graph"):
                record.update(_act(cfg, task, world, trace, clock))
            recording.close()  # the video is finished and named in the trace before the episode's end
            record["final_xyz"] = {n: [round(float(v), 4) for v in o.pose.p] for n, o in sorted(world.objects.items())}
            record["trace"] = str(tdir.relative_to(Path(out_dir)))
            record["wall_s"] = time.perf_counter() - t0
            queue1 = thread_queue_s()
            queue_s = None if queue0 is None or queue1 is None else queue1 - queue0
            record["cost"] = cost_record(clock, record["wall_s"], world.sim_time_s, time.process_time() - cpu0,
                                         queue_s)  # fmt: skip
            trace.emit("run_end", status=record["status"], success=record["success"],
                       graph_success=record.get("graph_success"), wall_s=record["wall_s"],
                       failure_report=record.get("failure_report") or record.get("message"))  # fmt: skip
    except CalibrationFileError:
        shutil.rmtree(tdir, ignore_errors=True)  # no trace of an episode that did not run
        raise
    finally:
        world.close()
    return record


def check_calibration_unchanged(cfg: BenchConfig) -> None:
    """The twin's calibration file still has the content the run started with (its identity); else
    CalibrationFileError."""
    from mallvi.robot_drivers.calibration.calibration_files import file_sha256

    assert cfg.calibration is not None  # BenchConfig checks it
    try:
        now = file_sha256(cfg.calibration)
    except OSError as e:
        raise CalibrationFileError(f"{cfg.calibration}: cannot be read any more: {e.strerror or e}") from e
    if now != cfg.calibration_sha256:
        raise CalibrationFileError(f"{cfg.calibration} changed since this benchmark run started; its episodes "
                                   "must all use one calibration: restore it, or use another --out folder")


def station_record(cfg: BenchConfig) -> dict[str, Any]:
    """The Station an episode runs on and what it is given that a real rig would not have: the simulator's, or
    the twin's (whose only privilege is that success is judged by simulator truth)."""
    if cfg.station == "twin":
        from mallvi.twin.twin_station import TWIN_PRIVILEGED, TwinStation

        return {"station": TwinStation.name, "privileged": list(TWIN_PRIVILEGED)}
    return {"station": "sim", "privileged": sim_privileged(cfg)}


def sim_privileged(cfg: BenchConfig) -> list[str]:
    """What every benchmark episode is given that a real rig would not have (the simulator's Station)."""
    from mallvi.graph.assemble import PERCEPTION_PRIVILEGED
    from mallvi.sim_bridge.sim_station import SIM_PRIVILEGED

    return [*SIM_PRIVILEGED, *([PERCEPTION_PRIVILEGED] if cfg.perception == "sim" and cfg.agent != "expert" else [])]


def seed_global_rngs(seed: int) -> None:
    """Seed every process-global random source an episode touches (motion planning's OMPL/FCL, numpy, random),
    so an episode's result depends on its seed only, not on what ran before it in the same process."""
    import random

    import mplib
    import numpy as np

    mplib.set_global_seed(int(seed))
    np.random.seed(int(seed) % 2**32)
    random.seed(int(seed))


def _act(cfg: BenchConfig, task: BenchTask, world: Any, trace: TraceWriter, clock: CostClock) -> dict[str, Any]:
    agent: Any = None
    try:
        with clock.phase("setup"):
            agent = make_agent(cfg, task)
        if cfg.reuse:
            reuse_scans(agent)
        instrument_agent(clock, agent)
        if hasattr(agent, "trace"):
            agent.trace = trace
        if isinstance(task, GroundingTask):
            stats = run_grounding(task, world, agent, trace)
            score = task.score(world, stats.answers)
            return _stats_record(stats, success=score >= 100.0 - 1e-9, score=score, truth=task.truth(world),
                                 **_llm_calls(agent))
        paper = cfg.agent == "single" and cfg.single_protocol == "paper"
        if hasattr(agent, "run_episode"):
            stats = agent.run_episode(task, world, trace)
        elif task.tier == "fine":
            stats = (run_fine_paper if paper else run_fine)(task, world, agent, trace)
        else:
            stats = (run_planning_paper if paper else run_planning)(task, world, agent, trace)
        evaluation = task.evaluate(world)
        rec = _stats_record(stats, success=evaluation.success, score=None, **_llm_calls(agent))
        if not evaluation.success:  # which condition failed, by how much (ManiSkill's ``evaluate`` style)
            rec["conditions"] = evaluation.to_json()
        return rec
    except CalibrationFileError:  # the station, not the agent: the run stops, the episode is not recorded
        raise
    except Exception as e:  # an agent crash is this episode's failure, recorded with its reason
        log.exception("episode %s/%s failed with an exception", task.name, cfg.agent)
        trace.emit("error", where="bench.episode", message=traceback.format_exc(limit=5))
        return {"status": "error", "success": False, "score": 0.0 if isinstance(task, GroundingTask) else None,
                "message": f"{type(e).__name__}: {e}", **_llm_calls(agent)}  # fmt: skip


def _llm_calls(agent: Any) -> dict[str, Any]:
    """A turn-based agent's model calls (the single agent keeps ``llm_calls``); the graph's come in its stats."""
    calls = getattr(agent, "llm_calls", None)
    return {"llm_calls": dict(calls)} if isinstance(calls, dict) else {}


def _stats_record(stats: EpisodeStats, *, success: bool, score: float | None, **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "status": "done",
        "success": success,
        "score": score,
        "turns": stats.turns,
        "actions": stats.actions,
        "failed_actions": stats.failed_actions,
        "refusals": stats.refusals,
        "parse_errors": stats.parse_errors,
    }
    if stats.answers is not None:
        rec["answers"] = dict(stats.answers)
    rec.update(stats.extra)
    rec.update(extra)
    return rec


def _contingency_kw(cfg: BenchConfig) -> dict[str, Any]:
    if cfg.contingency == "none":
        return {}
    return {"contingency": cfg.contingency}
