"""Condition results: what held, by how much a failed one missed, and that an empty check never succeeds."""

from __future__ import annotations

import pytest

from mallvi.bench.tasks.conditions import Evaluation, above, above_original_table, below, flag


def test_a_failed_limit_reports_its_miss_and_a_held_one_none() -> None:
    near = below("bread-pan |dx|", 0.052, 0.035)
    assert not near.held and near.miss == pytest.approx(0.017)
    assert "missed by 0.017 m" in near.describe()
    high = above("head above table top", 0.20, 0.18)
    assert high.held and high.miss is None and high.to_json()["held"] is True and "miss" not in high.to_json()
    assert below("at the limit", 0.035, 0.035).held is False  # strict, as the original's checks


def test_an_evaluation_succeeds_only_when_every_condition_held() -> None:
    held, failed = flag("receiver holds", True), flag("giver open", False)
    assert Evaluation.of([held]).success
    ev = Evaluation.of([held, failed])
    assert not ev.success and ev.failed == (failed,)
    assert not Evaluation.of([]).success  # a check with nothing to check is never a success
    assert above_original_table(0.92) == pytest.approx(0.18)
