"""Where an episode's wall time goes: scene set-up, rendering, physics, motion planning, perception, graph.

A ``CostClock`` times named phases exclusively: time spent in a phase that runs inside another (a physics step
inside a perception call, say) counts for the inner phase only. The episode runner wraps the world's rendering,
physics and planning entry points and the agent's perception port with it; what the agent does besides these
(LangGraph, the backends, trace writing) is its ``graph`` share. ``cpu_s`` is the process's CPU time over the
episode (all threads, lavapipe's render threads included), so episodes per core-minute can be computed.
``queue_s`` is how long the episode's thread stood ready to run while every core was busy with other work (Linux's
schedstat): on a shared machine it is the part of the wall time that other processes took.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

#: the measured phases; ``graph`` is the agent's time outside all others (the expert's or single agent's own time
#: for those agents); ``other`` in a record is what is left (trace writing, the success check, closing)
PHASES: tuple[str, ...] = ("setup", "render", "physics", "planning", "perception", "graph")
#: the world's planner methods that count as motion planning (IK included)
PLANNER_METHODS: tuple[str, ...] = ("ik", "plan_to_qpos", "plan_to_pose", "plan_straight")
#: the world's methods that render camera images
RENDER_METHODS: tuple[str, ...] = ("observe", "render_all")
#: the perception port's methods
PERCEPTION_METHODS: tuple[str, ...] = ("scan", "detect")
#: a perception pipeline's methods (Tier 1's answerer uses one directly, without a port)
PIPELINE_METHODS: tuple[str, ...] = ("detect", "localize")

F = TypeVar("F", bound=Callable[..., Any])


class CostClock:
    """Accumulates exclusive wall seconds per phase; nested phases are subtracted from the enclosing one."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self._stack: list[tuple[str, float]] = []  # (phase, start of its current exclusive stretch)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the block as ``name``; an enclosing phase's clock pauses meanwhile."""
        self._enter(name)
        try:
            yield
        finally:
            self._leave()

    def _enter(self, name: str) -> None:
        now = time.perf_counter()
        if self._stack:
            outer, since = self._stack[-1]
            self.seconds[outer] = self.seconds.get(outer, 0.0) + now - since
        self._stack.append((name, now))

    def _leave(self) -> None:
        end = time.perf_counter()
        name, since = self._stack.pop()
        self.seconds[name] = self.seconds.get(name, 0.0) + end - since
        if self._stack:
            outer, _ = self._stack[-1]
            self._stack[-1] = (outer, end)

    def wrap(self, fn: F, name: str) -> F:
        """``fn`` timed as phase ``name`` (without a context manager: physics steps call it thousands of times)."""
        enter, leave = self._enter, self._leave

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            enter(name)
            try:
                return fn(*args, **kwargs)
            finally:
                leave()

        return timed  # type: ignore[return-value]

    def wrap_methods(self, obj: Any, methods: Sequence[str], name: str) -> None:
        """Replace ``obj``'s bound methods (those it has) by timed ones, on this instance only."""
        for m in methods:
            fn = getattr(obj, m, None)
            if callable(fn):
                setattr(obj, m, self.wrap(fn, name))


def instrument_world(clock: CostClock, world: Any) -> None:
    """Time the simulator world's rendering, physics steps and motion planning with ``clock``.

    Physics is timed at the scene's ``step`` (the arms' controllers and the world's own settling both end there).
    """
    clock.wrap_methods(world, RENDER_METHODS, "render")
    scene = getattr(world, "scene", None)
    if scene is not None:
        clock.wrap_methods(scene, ("step",), "physics")
    for planner in getattr(world, "planners", {}).values():
        clock.wrap_methods(planner, PLANNER_METHODS, "planning")


def instrument_agent(clock: CostClock, agent: Any) -> None:
    """Time the agent's perception: its port (the graph agent's ``port``) or its pipeline (``perception``, the
    Tier 1 answerer's), whichever it has."""
    port = getattr(agent, "port", None)
    if port is not None:
        clock.wrap_methods(port, PERCEPTION_METHODS, "perception")
    pipeline = getattr(agent, "perception", None)
    if pipeline is not None and not isinstance(pipeline, str):
        clock.wrap_methods(pipeline, PIPELINE_METHODS, "perception")


def thread_queue_s() -> float | None:
    """Seconds the calling thread has waited for a core while ready to run, or None where the kernel does not say."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as fh:
            return int(fh.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def cost_record(
    clock: CostClock, wall_s: float, sim_s: float, cpu_s: float, queue_s: float | None = None
) -> dict[str, float]:
    """The episode's cost for episodes.jsonl: wall, simulated and CPU seconds, the wall split per phase and, when
    known, ``queue_s`` (the part of the wall the episode's thread waited for a core; it overlaps the phases)."""
    rec = {"wall_s": round(wall_s, 4), "sim_s": round(sim_s, 4), "cpu_s": round(cpu_s, 4)}
    rec.update({f"{p}_s": round(clock.seconds.get(p, 0.0), 4) for p in PHASES})
    rec["other_s"] = round(max(0.0, wall_s - sum(clock.seconds.get(p, 0.0) for p in PHASES)), 4)
    if queue_s is not None:
        rec["queue_s"] = round(min(max(0.0, queue_s), wall_s), 4)
    return rec


def cost_totals(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Sums over the records that carry a cost, the sim-time speed-up and episodes per core-minute."""
    costs = [r["cost"] for r in records if isinstance(r.get("cost"), Mapping)]
    if not costs:
        return None
    keys = ("wall_s", "sim_s", "cpu_s", *(f"{p}_s" for p in (*PHASES, "other")))
    tot: dict[str, Any] = {k: round(sum(float(c.get(k, 0.0)) for c in costs), 3) for k in keys}
    queued = [float(c["queue_s"]) for c in costs if "queue_s" in c]
    if queued:
        tot["queue_s"] = round(sum(queued), 3)
    tot["episodes"] = len(costs)
    tot["sim_per_wall"] = round(tot["sim_s"] / tot["wall_s"], 3) if tot["wall_s"] > 0 else None
    tot["episodes_per_core_minute"] = round(60.0 * len(costs) / tot["cpu_s"], 3) if tot["cpu_s"] > 0 else None
    return tot


def format_totals(tot: Mapping[str, Any]) -> str:
    """One line for the terminal: wall split in percent, sim-time speed-up and episodes per core-minute."""
    wall = float(tot["wall_s"]) or 1.0
    split = ", ".join(f"{p} {100.0 * float(tot[f'{p}_s']) / wall:.0f}%" for p in (*PHASES, "other"))
    speed = tot.get("sim_per_wall")
    epcm = tot.get("episodes_per_core_minute")
    queue = f"; waiting for a core {100.0 * float(tot['queue_s']) / wall:.0f}%" if "queue_s" in tot else ""
    return (
        f"cost: {tot['episodes']} episodes, wall {tot['wall_s']:.1f} s ({split}{queue}); "
        f"simulated {tot['sim_s']:.1f} s ({'—' if speed is None else f'{speed:.2f}'}× wall); "
        f"CPU {tot['cpu_s']:.1f} s, {'—' if epcm is None else f'{epcm:.1f}'} episodes per core-minute"
    )
