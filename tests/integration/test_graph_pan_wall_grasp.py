"""Tier 3 through the graph when a pan's handle ends beyond the arm's reach (place_bread_skillet_ee, seed 2500016:
the pan stands at the right edge near the robot, and no top-down grasp across its handle has an inverse-kinematics
solution). The right hand takes the pan across its wall beside the handle's root, and the loaf goes into the pan
off its middle, away from that hand, where the guard lets the two grippers come."""

from __future__ import annotations

import json
from pathlib import Path

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.runner import run_bench


def test_the_pan_is_taken_across_its_wall_where_its_handle_is_out_of_reach(tmp_path: Path) -> None:
    config = BenchConfig(tier="fine", tasks=("place_bread_skillet_ee",), episodes=1, seed_start=2500016,
                         agent="mallvi", perception="sim", save_images=False)
    run_bench(config, tmp_path, workers=1)
    record = json.loads((tmp_path / "episodes.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert record["success"] and record["graph_success"], record.get("failure_report")
    events = [json.loads(line) for line in (tmp_path / record["trace"] / "events.jsonl").read_text().splitlines()]
    refused = [e["message"] for e in events if e["kind"] == "actor_command" and not e["ok"]]
    assert not any("clearance" in m for m in refused), refused  # the loaf was put where the grippers may come
