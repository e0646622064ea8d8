"""Scores and rates: the Tier 1 Gaussian-weighted spatial score and per-task aggregates."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from mallvi.contracts.geometry import ArmSide

#: Tier 1 tolerance: a wrong arm for a block near the centre line costs little, far from it costs all.
SPATIAL_SIGMA_M = 0.025


def correct_arm(x_world_m: float) -> ArmSide:
    """The arm the benchmark counts as right for a block at world x (left if x < 0, else right)."""
    return "left" if x_world_m < 0.0 else "right"


def spatial_score(x_world_m: float, answer: str | None, sigma_m: float = SPATIAL_SIGMA_M) -> float:
    """One block's Tier 1 score, 0..100.

    100 if ``answer`` names the correct arm, else ``100·exp(-x²/(2σ²))``; a missing or unparsable answer
    scores as a wrong one.
    """
    if not math.isfinite(x_world_m):
        raise ValueError(f"block x must be finite, got {x_world_m}")
    if sigma_m <= 0:
        raise ValueError(f"sigma must be positive, got {sigma_m}")
    if answer is not None and answer.strip().lower() == correct_arm(x_world_m):
        return 100.0
    return 100.0 * math.exp(-(x_world_m**2) / (2.0 * sigma_m**2))


def episode_spatial_score(blocks_x_m: Mapping[str, float], answers: Mapping[str, str | None] | None) -> float:
    """Mean spatial score over an episode's blocks; ``answers=None`` (no parsable output) scores 0."""
    if not blocks_x_m:
        raise ValueError("an episode needs at least one block")
    if answers is None:
        return 0.0
    return sum(spatial_score(x, answers.get(name)) for name, x in blocks_x_m.items()) / len(blocks_x_m)


@dataclass(frozen=True)
class TaskAggregate:
    """Aggregate of one task's finished episodes."""

    episodes: int
    successes: int
    success_rate: float
    score: float | None
    skipped_seeds: tuple[int, ...]


def aggregate(episodes: Iterable[Mapping[str, object]]) -> TaskAggregate:
    """Aggregate episode records (as written to episodes.jsonl) of one task.

    Records with ``status == "skipped"`` (scene could not be set up) only list their seed; the rate and the
    mean score are over the others.
    """
    done: list[Mapping[str, object]] = []
    skipped: list[int] = []
    for ep in episodes:
        if ep.get("status") == "skipped":
            skipped.append(_as_int(ep.get("seed")))
        else:
            done.append(ep)
    n = len(done)
    wins = sum(1 for ep in done if ep.get("success") is True)
    scores = [float(s) for ep in done if isinstance(s := ep.get("score"), int | float)]
    score = sum(scores) / len(scores) if scores and len(scores) == n else None
    return TaskAggregate(n, wins, wins / n if n else 0.0, score, tuple(sorted(skipped)))


def mean_or_none(values: Sequence[float | None]) -> float | None:
    """Mean of the values that are present; None when none is."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _as_int(value: object) -> int:
    if isinstance(value, int):
        return value
    raise ValueError(f"episode record has no integer seed: {value!r}")
