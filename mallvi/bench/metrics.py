"""Scores and rates: the Tier 1 Gaussian-weighted spatial score, per-task aggregates and their 95% intervals."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from mallvi.contracts.geometry import ArmSide

#: Tier 1 tolerance: a wrong arm for a block near the centre line costs little, far from it costs all.
SPATIAL_SIGMA_M = 0.025
#: the normal quantile of a two-sided 95% interval
Z_95 = 1.959963984540054
#: below this many episodes a rate is shown as indicative only: its 95% interval is wider than ±0.2 near 50%
INDICATIVE_BELOW = 20


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
    scores = [float(s) for ep in done if isinstance(s := ep.get("score"), int | float) and math.isfinite(s)]
    score = sum(scores) / len(scores) if scores and len(scores) == n else None
    return TaskAggregate(n, wins, wins / n if n else 0.0, score, tuple(sorted(skipped)))


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval of a success rate (0..1), 95% by default; None without episodes.

    Unlike rate ± z·SE it stays inside [0, 1] and does not shrink to nothing at 0 of n or n of n.
    """
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be within 0..{n}, got {successes}")
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: Sequence[float], z: float = Z_95, bounds: tuple[float, float] = (0.0, 100.0)
                  ) -> tuple[float, float] | None:
    """A normal-approximation 95% interval of a mean (mean ± z·s/√n, clipped to ``bounds``); None below 2 values."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = z * sd / math.sqrt(n)
    return max(bounds[0], mean - half), min(bounds[1], mean + half)


def mean_or_none(values: Sequence[float | None]) -> float | None:
    """Mean of the values that are present; None when none is."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _as_int(value: object) -> int:
    if isinstance(value, int):
        return value
    raise ValueError(f"episode record has no integer seed: {value!r}")
