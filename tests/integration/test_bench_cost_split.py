"""The cost profile of a Tier 1 episode of mallvi's answerer counts its perception as perception."""

from __future__ import annotations

from pathlib import Path

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.episode import run_episode


def test_a_grounding_episode_s_perception_is_timed_as_perception(tmp_path: Path) -> None:
    cfg = BenchConfig(tier="grounding", tasks=("grounding_sparse",), episodes=1, agent="mallvi", save_images=False)
    record = run_episode(cfg, "grounding_sparse", 100000, tmp_path)
    cost = record["cost"]
    assert record["status"] != "error", record
    assert cost["perception_s"] > 0.0  # detection and back-projection, which used to count as the graph's time
    assert cost["perception_s"] > cost["graph_s"]  # the answerer does little besides perceiving
