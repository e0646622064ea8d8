"""The paper's published results (ST-BiBench Tables 1-3) as data, to print beside ours.

Numbers are success rates in percent (Tier 1: the mean spatial score, 0-100), copied from the paper
(seeds/000). Column orders follow ``tiers.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

from mallvi.bench.tiers import FINE_TASKS, GROUNDING_TASKS, PLANNING_TASKS, TierName

#: The models printed beside our results by default (BENCHMARK.md "Anchors").
DEFAULT_ANCHOR_MODELS: tuple[str, ...] = (
    "GPT-5",
    "Gemini-2.5-Pro",
    "Claude-sonnet-4",
    "GPT-4.1",
    "Qwen3-VL-235B-A22B-Instruct",
    "Qwen2.5-VL-7B-Instruct",
)

#: Table 1 (Tier 2), per model: the 14 task success rates in PLANNING_TASKS order, then the independent
#: average, the sequential average and the total average. None = not reported ("/" in the paper).
# fmt: off
_TIER2_ROWS: dict[str, tuple[float | None, ...]] = {
    "Qwen3-VL-235B-A22B-Instruct": (36, 1, 75, 90, 83, 67, 96, 63, 86, 92, 5, 17, 2, 46, 58.67, 50.88, 54.21),
    "Llama-4-Scout-17B-16E-Instruct": (20, 0, 7, 37, 0, 0, 81, 9, 60, 64, 4, 12, 0, 8, 10.67, 29.75, 21.57),
    "InternVL3-78B": (72, 7, 69, 81, 39, 70, 9, 5.9, 26, 96, 4, 23, 0, 16, 56.33, 33.63, 43.36),
    "InternVL2.5-78B": (56, 22, 73, 76, 27, 33, 80, 0, 84, 33, 1, 13, 0, 25, 47.83, 29.51, 37.36),
    "Qwen2.5-VL-72B-Instruct": (16, 0, None, 88, 3, 36, 74, 42, 85, 59, 4, 32, 0, 2, 28.6, 37.25, 33.92),
    "InternVL3.5-38B": (72, 0, 6, 81, 52, 38, 94, 11, 18, 93, 12, 8, 0, 29, 41.5, 33.13, 36.71),
    "InternVL3-38B": (71, 0, 79, 77, 58, 60, 63, 67, 90, 97, 1, 44, 0, 33, 57.5, 49.38, 52.86),
    "InternVL2.5-38B": (1, 0, 83, 70, 62, 56, 92, 11, 84, 3, 7, 47, 0, 20, 45.33, 33, 38.29),
    "Ovis2-34B": (80, 2, 77, 82, 1, 31, 96, 3, 14, 94, 10, 27, 0, 10, 45.5, 31.75, 37.64),
    "Qwen3-VL-32B-Instruct": (41, 16, 88, 75, 40, 68, 93, 63, 75, 96, 14, 36, 8, 22, 54.67, 50.88, 52.5),
    "Qwen2.5-VL-32B-Instruct": (62, 7, 93, 88, 24, 42, 94, 55, 88, 95, 7, 49, 0, 13, 52.67, 50.13, 51.21),
    "Qwen3-VL-30B-A3B-Instruct": (7, 0, 61, 23, 15, 13, 51, 1, 54, 51, 5, 44, 0, 4, 19.83, 26.25, 23.5),
    "Gemma-3-27b-it": (62, 0, 51, 26, 0, 24, 10, 24, 66, 38, 1, 11, 0, 6, 27.17, 19.5, 22.79),
    "Ovis2-16B": (67, 0, 25, 32, 38, 3, 72, 0, 1, 97, 4, 25, 0, 0, 27.5, 24.88, 26),
    "Gemma-3-12b-it": (83, 0, 5, 34, 0, 0, 32, 28, 36, 1, 1, 4, 0, 9, 20.33, 13.88, 16.64),
    "Llama-3.2-11B-Vision-Instruct": (1, 0, 23, 15, 0, 0, 68, 5, 8, 69, 1, 14, 0, 0, 6.5, 20.63, 14.57),
    "Ovis2.5-9B": (41, 0, 47, 16, 0, 3, 78, 14, 71, 33, 7, 27, 0, 0, 17.83, 28.75, 24.07),
    "InternVL3-8B": (55, 0, 16, 3, 6, 3, 0, 1, 71, 0, 0, 11, 0, 0, 13.83, 10.38, 11.86),
    "InternVL2.5-8B": (2, 0, 13, 1, 0, 0, 0, 9, 0, 0, 1, 0, 0, 0, 2.67, 1.25, 1.86),
    "Qwen2.5-VL-7B-Instruct": (3, 0, 4, 2, 1, 0, 1, 0, 6, 0, 3, 0, 0, 0, 1.67, 1.25, 1.43),
    "Gemini-2.5-Pro": (77, 22, 88, 99, 62, 80, 94, 60, 83, 94, 74, 35, 63, 52, 71.33, 69.38, 70.21),
    "Gemini-2.5-flash": (60, 36, 82, 93, 64, 68, 78, 28, 78, 94, 61, 35, 45, 53, 67.17, 59, 62.5),
    "Gemini-2.0-flash": (72, 43, 87, 94, 43, 38, 67, 33, 81, 87, 15, 33, 3, 11, 62.83, 41.25, 50.5),
    "GPT-5": (64, 50, 92, 100, 86, 68, 69, 24, 86, 90, 71, 17, 58, 63, 76.67, 59.75, 67),
    "GPT-4.1": (81, 40, 87, 100, 86, 77, 47, 46, 88, 96, 7, 18, 1, 40, 78.5, 42.88, 58.14),
    "GPT-4o": (68, 22, 50, 74, 37, 63, 88, 60, 85, 95, 5, 16, 0, 15, 52.33, 45.5, 48.43),
    "Claude-sonnet-4": (57, 31, 68, 97, 82, 67, 92, 32, 83, 97, 37, 20, 1, 11, 67, 46.63, 55.36),
    "Claude-sonnet-3.7": (68, 39, 66, 96, 86, 59, 95, 32, 84, 92, 32, 12, 1, 12, 69, 45, 55.29),
}
# fmt: on
#: Table 2 (Tier 1), per model: sparse, dense, cluttered, average (mean score 0-100).
# fmt: off
_TIER1_ROWS: dict[str, tuple[float, ...]] = {
    "Qwen3-VL-235B-A22B-Instruct": (86.82, 93.5, 90.33, 90.22),
    "Llama-4-Scout-17B-16E-Instruct": (85.49, 87.75, 86.16, 86.47),
    "InternVL3-78B": (92.8, 97.07, 90.16, 93.34),
    "InternVL2.5-78B": (87.21, 86.45, 89.37, 87.68),
    "InternVL3-38B": (81.82, 92.13, 89.85, 87.94),
    "InternVL3.5-38B": (89.48, 91.45, 86.75, 89.23),
    "InternVL2.5-38B": (79.16, 85.47, 85.99, 83.54),
    "Ovis2-34B": (94.78, 92.78, 90.45, 92.67),
    "Qwen3-VL-32B-Instruct": (94.47, 95.77, 91.77, 94),
    "Qwen2.5-VL-32B-Instruct": (85.16, 86.08, 87.38, 86.21),
    "Qwen3-VL-30B-A3B-Instruct": (85.5, 91.13, 88.98, 88.54),
    "Gemma-3-27b-it": (92.4, 81.12, 85.78, 86.43),
    "Ovis2-16B": (94.07, 91.74, 88, 91.27),
    "Gemma-3-12b-it": (80.09, 57.17, 70.22, 69.16),
    "Llama-3.2-11B-Vision-Instruct": (54.64, 53.62, 54.01, 54.09),
    "Ovis2.5-9B": (72.79, 78.12, 73.13, 74.68),
    "InternVL3-8B": (79.53, 69.79, 86.79, 78.7),
    "InternVL2.5-8B": (87.48, 78.96, 81.81, 82.75),
    "Qwen2.5-VL-7B-Instruct": (75.2, 65.83, 79.34, 73.46),
    "Gemini-2.5-Pro": (96.14, 96.77, 92.12, 95.01),
    "Gemini-2.5-flash": (95.77, 96.76, 92.88, 95.13),
    "Gemini-2.0-flash": (95.45, 98.69, 92, 95.38),
    "GPT-5": (94.73, 95.13, 92.97, 94.28),
    "GPT-4.1": (93.43, 92.48, 91.76, 92.55),
    "GPT-4o": (89.02, 91.13, 87.1, 89.08),
    "Claude-sonnet-4.5": (96.12, 94.78, 92.23, 94.38),
    "Claude-sonnet-4": (94.13, 94.46, 92.88, 93.82),
    "Claude-sonnet-3.7": (93.46, 95.11, 91.94, 93.51),
    "GLM-4.5V": (91.48, 97.77, 93, 94.08),
}
# fmt: on
#: Table 3 (Tier 3), per model: the 5 task success rates in FINE_TASKS order, then the average.
# fmt: off
_TIER3_ROWS: dict[str, tuple[float, ...]] = {
    "Qwen3-VL-235B-A22B-Instruct": (41, 28, 9, 46, 2, 25.2),
    "Llama-4-Scout-17B-16E-Instruct": (1, 0, 0, 29, 0, 6),
    "InternVL3-78B": (8, 50, 0, 79, 1, 27.6),
    "Gemma-3-27b-it": (8, 13, 3, 7, 0, 6.2),
    "Claude-sonnet-4.5": (17, 13, 6, 89, 2, 25.4),
    "GPT-5": (66, 83, 50, 79, 56, 66.8),
    "Gemini-2.5-Pro": (82, 61, 39, 81, 38, 60.2),
    "Gemini-2.5-flash": (74, 48, 13, 84, 49, 53.6),
}
# fmt: on


def models(tier: TierName) -> list[str]:
    """Every model the paper reports for a tier, in the table's order."""
    return list(_rows(tier))


def task_scores(tier: TierName, model: str) -> dict[str, float | None]:
    """The paper's per-task numbers for one model (None where it reports none); KeyError for an unknown model."""
    rows = _rows(tier)
    if model not in rows:
        raise KeyError(f"the paper reports no {tier} result for {model!r}")
    tasks = _tasks(tier)
    return dict(zip(tasks, rows[model][: len(tasks)], strict=True))


def tier_average(tier: TierName, model: str) -> float | None:
    """The paper's overall average for one model on a tier (Table 1: total average), or None if not reported."""
    rows = _rows(tier)
    if model not in rows:
        return None
    return rows[model][-1]


def same_tasks_average(tier: TierName, model: str, tasks: Sequence[str]) -> tuple[float | None, int]:
    """The paper's mean for one model over ``tasks`` only (the tasks a run ran), and over how many of them it
    reports a figure; (None, 0) for a model the paper does not report on this tier or none of these tasks."""
    if model not in _rows(tier):
        return None, 0
    scores = task_scores(tier, model)
    present = [v for t in tasks if (v := scores.get(t)) is not None]
    return (sum(present) / len(present) if present else None), len(present)


def planning_group_averages(model: str) -> tuple[float | None, float | None]:
    """Table 1's independent-parallel and sequential-collaborative averages for one model."""
    row = _TIER2_ROWS[model]
    return row[len(PLANNING_TASKS)], row[len(PLANNING_TASKS) + 1]


def _rows(tier: TierName) -> dict[str, tuple[float | None, ...]]:
    table: dict[str, dict[str, tuple[float | None, ...]]] = {
        "grounding": dict(_TIER1_ROWS),
        "planning": _TIER2_ROWS,
        "fine": dict(_TIER3_ROWS),
    }
    return table[tier]


def _tasks(tier: TierName) -> tuple[str, ...]:
    return {"grounding": GROUNDING_TASKS, "planning": PLANNING_TASKS, "fine": FINE_TASKS}[tier]
