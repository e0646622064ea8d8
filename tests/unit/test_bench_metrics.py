"""The Tier 1 spatial score, task aggregates and the paper's tables as data."""

from __future__ import annotations

import math

import pytest

from mallvi.bench import anchors
from mallvi.bench.metrics import aggregate, episode_spatial_score, spatial_score
from mallvi.bench.tiers import TIERS, select_tasks


def test_correct_arm_scores_full_marks() -> None:
    assert spatial_score(-0.2, "LEFT") == 100.0
    assert spatial_score(0.01, "right") == 100.0


def test_wrong_arm_near_the_centre_line_costs_little() -> None:
    s = spatial_score(0.01, "left")
    assert s == pytest.approx(100.0 * math.exp(-(0.01**2) / (2 * 0.025**2)))
    assert 90.0 < s < 93.0  # 92.3: a near-centre mistake is almost forgiven


def test_wrong_arm_far_from_the_centre_line_scores_nothing() -> None:
    assert spatial_score(-0.2, "right") < 1e-6
    assert spatial_score(0.2, None) < 1e-6


def test_unparsable_answer_counts_as_wrong() -> None:
    assert spatial_score(0.01, "middle") == spatial_score(0.01, "left")


def test_episode_score_is_mean_over_blocks_and_zero_without_output() -> None:
    xs = {"red_block": -0.2, "green_block": 0.01, "blue_block": 0.15}
    answers: dict[str, str | None] = {"red_block": "left", "green_block": "left", "blue_block": "right"}
    expected = (100.0 + spatial_score(0.01, "left") + 100.0) / 3
    assert episode_spatial_score(xs, answers) == pytest.approx(expected)
    assert episode_spatial_score(xs, None) == 0.0
    partial = episode_spatial_score(xs, {"red_block": "left"})  # missing answers count as wrong
    assert partial == pytest.approx((100.0 + spatial_score(0.01, None) + spatial_score(0.15, None)) / 3)


def test_aggregate_skips_unbuildable_seeds() -> None:
    eps = [
        {"seed": 100000, "status": "done", "success": True, "score": 100.0},
        {"seed": 100001, "status": "skipped"},
        {"seed": 100002, "status": "done", "success": False, "score": 50.0},
    ]
    agg = aggregate(eps)
    assert (agg.episodes, agg.successes, agg.success_rate) == (2, 1, 0.5)
    assert agg.score == 75.0
    assert agg.skipped_seeds == (100001,)


def test_paper_tables_match_their_own_averages() -> None:
    """Each row's per-task numbers average to the paper's own average (except one row the paper misprints)."""
    for tier in TIERS:
        for model in anchors.models(tier):
            vals = [v for v in anchors.task_scores(tier, model).values() if v is not None]
            avg = anchors.tier_average(tier, model)
            assert avg is not None
            if (tier, model) == ("planning", "InternVL3-78B"):
                continue  # Table 1 prints Hand1 9 / Hand2 5.9 but a total average of 43.36
            assert sum(vals) / len(vals) == pytest.approx(avg, abs=0.02), (tier, model)
    assert anchors.tier_average("planning", "GPT-5") == 67.0
    assert anchors.tier_average("grounding", "Gemini-2.5-Pro") == 95.01
    assert anchors.task_scores("fine", "GPT-5")["grab_roller"] == 79.0


def test_task_selection_rejects_foreign_tasks() -> None:
    assert select_tasks("fine", "all")[0] == "place_object_scale"
    assert select_tasks("planning", "handover_mic,blocks_tower") == ["handover_mic", "blocks_tower"]
    with pytest.raises(ValueError, match="not in tier"):
        select_tasks("planning", "grab_roller")


def test_a_cost_record_adds_up_to_its_wall_and_says_how_long_it_waited_for_a_core() -> None:
    from mallvi.bench.cost import CostClock, cost_record, cost_totals, format_totals, thread_queue_s

    clock = CostClock()
    with clock.phase("graph"), clock.phase("render"):
        pass
    rec = cost_record(clock, wall_s=2.0, sim_s=10.0, cpu_s=1.0, queue_s=0.5)
    parts = sum(rec[f"{p}_s"] for p in ("setup", "render", "physics", "planning", "perception", "graph", "other"))
    assert parts == pytest.approx(2.0, abs=1e-3) and rec["queue_s"] == 0.5
    assert "queue_s" not in cost_record(clock, wall_s=2.0, sim_s=10.0, cpu_s=1.0)  # unknown: left out
    tot = cost_totals([{"cost": rec}, {"cost": rec}])
    assert tot is not None and tot["queue_s"] == 1.0
    assert "waiting for a core 25%" in format_totals(tot)
    before = thread_queue_s()
    after = thread_queue_s()
    assert before is not None and after is not None and after >= before  # Linux reports it
