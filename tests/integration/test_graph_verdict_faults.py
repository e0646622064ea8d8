"""Under medium faults the graph's final verdict agrees with the task's check where it once claimed success:

- place_object_basket seed 1400001: a missed grasp of the basket pushes it out from under the toy, and the basket
  is then lifted empty; the earlier "toy in the basket" is re-checked (what is in a container moves with it) and
  found undone, so the graph does not report success.
- place_bread_skillet seed 1400003: the loaf lands in the pan's body but off its middle (the task wants 3.5 cm);
  the Reflector holds "in a pan" to the middle third of its body and the loaf is put right.
- place_bread_skillet_ee seed 1400009 (Tier 3): a slip puts the pan down after it was moved to the centre to be
  held there; the loaf then lands in the pan on the table. The pan is re-checked as held to the end.
(The roller held by one hand where both were to hold it is tested in tests/unit/test_graph_nested_and_grounding.py.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.runner import run_bench


@pytest.mark.parametrize(("tier", "task", "seed"), [
    ("planning", "place_object_basket", 1400001), ("planning", "place_bread_skillet", 1400003),
    pytest.param("fine", "place_bread_skillet_ee", 1400009, marks=pytest.mark.slow)])
def test_the_graph_does_not_claim_what_the_task_check_denies(tier: str, task: str, seed: int, tmp_path: Path) -> None:
    config = BenchConfig(tier=tier, tasks=(task,), episodes=1, seed_start=seed, agent="mallvi",
                         perception="sim", contingency="medium")
    run_bench(config, tmp_path, workers=1)
    record = json.loads((tmp_path / "episodes.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert record["graph_success"] is not None
    assert bool(record["graph_success"]) == bool(record["success"]), (record.get("conditions"),
                                                                       record.get("failure_report"))
