"""Under medium faults the graph's final verdict agrees with the task's check where it once claimed success:

- place_object_basket seed 1400001: a missed grasp of the basket pushes it out from under the toy, and the basket
  is then lifted empty; the earlier "toy in the basket" is re-checked (what is in a container moves with it) and
  found undone, so the graph does not report success.
- place_bread_skillet seed 1400003: the loaf lands in the pan's body but off its middle (the task wants 3.5 cm);
  the Reflector holds "in a pan" to the middle third of its body and the loaf is put right.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.runner import run_bench


@pytest.mark.parametrize(("task", "seed"), [("place_object_basket", 1400001), ("place_bread_skillet", 1400003)])
def test_the_graph_does_not_claim_what_the_task_check_denies(task: str, seed: int, tmp_path: Path) -> None:
    config = BenchConfig(tier="planning", tasks=(task,), episodes=1, seed_start=seed, agent="mallvi",
                         perception="sim", contingency="medium")
    run_bench(config, tmp_path, workers=1)
    record = json.loads((tmp_path / "episodes.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert record["graph_success"] is not None
    assert bool(record["graph_success"]) == bool(record["success"]), (record.get("conditions"),
                                                                       record.get("failure_report"))
