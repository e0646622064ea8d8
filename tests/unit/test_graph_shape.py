"""The graph's shape (Mermaid snapshot), budgets and the recursion limit derived from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from mallvi.config import Budgets
from mallvi.graph.builder import build_graph

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize(("with_reflector", "snapshot"), [(True, "graph_mermaid.mmd"),
                                                          (False, "graph_mermaid_no_reflector.mmd")])
def test_graph_shape_matches_the_mermaid_snapshot(with_reflector: bool, snapshot: str) -> None:
    drawn = build_graph(with_reflector=with_reflector).get_graph().draw_mermaid()
    assert drawn == (FIXTURES / snapshot).read_text(), (
        f"the graph's shape changed; if intended, regenerate tests/fixtures/{snapshot}")


def test_the_snapshot_has_the_mallvi_structure() -> None:
    text = (FIXTURES / "graph_mermaid.mmd").read_text()
    for edge in ("__start__ --> decomposer", "__start__ --> descriptor", "decomposer --> dispatch",
                 "descriptor --> dispatch", "actor --> reflector", "reflector -.-> grounder",
                 "reflector -.-> descriptor", "reflector -.-> __end__"):
        assert edge in text
    assert "reflector -.-> decomposer" not in text  # a retry never replans the whole task


def test_recursion_limit_grows_with_the_budget_and_covers_a_full_run() -> None:
    small, big = Budgets(max_subtasks=2), Budgets(max_subtasks=12)
    assert big.recursion_limit() > small.recursion_limit()
    b = Budgets()
    # every subtask using all its attempts, failures of geometry included (they spend none of the budget, up to
    # as many again), plus a re-scan still fits
    assert b.attempt_cap_per_subtask == 2 * b.max_attempts_per_subtask
    worst = 3 + b.max_subtasks * (b.attempt_cap_per_subtask * 9 + 2)
    assert b.recursion_limit() >= min(worst, 3 + (b.attempt_cap_total + b.max_subtasks) * 9)


def test_budgets_reject_nonsense() -> None:
    with pytest.raises(ValueError):
        Budgets(max_attempts_per_subtask=0)


def test_parallel_refusals_are_joined_not_an_update_error() -> None:
    """Decomposer and Descriptor both refusing in the same step must give one refusal naming both reasons."""
    from mallvi.graph.state import join_refusals

    assert join_refusals(None, "no object called the purple block") == "no object called the purple block"
    assert join_refusals("a", None) == "a"
    assert join_refusals("a", "b") == "a; b"


def test_runs_without_a_checkpointer_share_one_compiled_graph_of_the_same_shape() -> None:
    from mallvi.graph.builder import shared_graph

    for with_reflector, snapshot in ((True, "graph_mermaid.mmd"), (False, "graph_mermaid_no_reflector.mmd")):
        assert shared_graph(with_reflector) is shared_graph(with_reflector)
        assert shared_graph(with_reflector).get_graph().draw_mermaid() == (FIXTURES / snapshot).read_text()
