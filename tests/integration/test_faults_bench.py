"""`mallvi bench --contingency`: the graph agent gets the level's retry budget and its episode trace shows every
injected fault as it happened."""

from __future__ import annotations

from pathlib import Path

from mallvi.bench.agents.graph_agent import GraphAgent
from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.episode import run_episode, trace_dir
from mallvi.config import Budgets
from mallvi.tracing.trace import read_events


def test_bench_graph_agent_uses_the_level_budget() -> None:
    cfg = BenchConfig(tier="planning", tasks=("stack_blocks_two",), episodes=1, contingency="medium")
    assert GraphAgent(cfg).budgets.max_attempts_per_subtask > Budgets().max_attempts_per_subtask
    plain = BenchConfig(tier="planning", tasks=("stack_blocks_two",), episodes=1)
    assert GraphAgent(plain).budgets == Budgets()


def test_bench_episode_traces_injected_faults(tmp_path: Path) -> None:
    cfg = BenchConfig(tier="planning", tasks=("stack_blocks_two",), episodes=1, contingency="hard", save_images=False)
    record = run_episode(cfg, "stack_blocks_two", 100000, tmp_path)
    assert record["status"] != "skipped"
    events = read_events(trace_dir(tmp_path, "stack_blocks_two", 100000))
    faults = [e for e in events if e["kind"] == "fault_injected"]
    assert faults, "at the hard level (80% of grasps and places fail) an episode must show injected faults"
    assert {f["fault"] for f in faults} <= {"grasp_miss", "grasp_slip", "place_off", "knock_over"}
    actor_ends = [e for e in events if e["kind"] == "node_end" and e.get("node") == "actor"]
    # faults are written as they happen: the first one precedes the end of the Actor step it hit
    assert actor_ends and faults[0]["seq"] < actor_ends[-1]["seq"]
    # the episode says what it was given that a real rig would not have, in its record and in its trace
    assert record["station"] == "sim" and "objects resolved from simulator truth" in record["privileged"]
    start = next(e for e in events if e["kind"] == "run_start")
    assert start["station"] == "sim" and start["privileged"] == record["privileged"]


def test_tier3_end_effector_actions_get_faults_too(tmp_path: Path) -> None:
    # Tier 3 moves objects with 16-number actions, not grasp_actor and place_actor: the fingers closing on an
    # object and letting go of it draw the grasp's and the place's faults
    cfg = BenchConfig(tier="fine", tasks=("stack_blocks_two",), episodes=1, contingency="hard", save_images=False,
                      perception="sim")
    run_episode(cfg, "stack_blocks_two", 1500000, tmp_path)
    events = read_events(trace_dir(tmp_path, "stack_blocks_two", 1500000))
    faults = [e for e in events if e["kind"] == "fault_injected"]
    assert faults, "at the hard level a Tier 3 episode must show injected faults"
    assert {f["skill"] for f in faults} <= {"grasp", "place"}
    calm = BenchConfig(tier="fine", tasks=("stack_blocks_two",), episodes=1, save_images=False, perception="sim")
    run_episode(calm, "stack_blocks_two", 1500000, tmp_path / "calm")
    assert not [e for e in read_events(trace_dir(tmp_path / "calm", "stack_blocks_two", 1500000))
                if e["kind"] == "fault_injected"]


def test_mallvi_run_accepts_every_benchmark_scene() -> None:
    """Every ST-BiBench task's scene is in the catalogue `mallvi run` is given, with the task's success check."""
    from mallvi.bench.task_scenes import scene_catalog
    from mallvi.bench.tasks import TASKS

    catalog = scene_catalog()
    for name, cls in TASKS.items():
        entry = catalog.get(name)
        assert entry.success is not None, f"{name}: no success check"
        assert entry.spec.name == (cls().shared_scene or name), f"{name}: runs in {entry.spec.name!r}"
