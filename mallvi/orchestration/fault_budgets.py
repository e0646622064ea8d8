"""Retry budgets matched to a contingency level: enough attempts that a subtask survives the level's fault rate.

One attempt of a pick-and-place subtask succeeds when its grasp and its place both do, with probability
``q = (1 - grasp_miss - grasp_slip) * (1 - place_off - knock_over)``. The attempts per subtask are the fewest
``n`` with ``1 - (1 - q)^n >= target``, never below the base budget and never above ``MAX_ATTEMPTS_PER_SUBTASK``
(a bound for custom levels whose q is near 0, not for the named ones).
The target is per subtask such that a run of ``TOTAL_PER_SUBTASK_BUDGET`` (3) subtasks gets through with
probability ``TARGET_RUN_SUCCESS`` (0.99): 0.99^(1/3) = 0.9967 per subtask. It is set high because the model
undercounts what a subtask pays: a subtask found undone later is re-done on the same budget, and a failed look
counts like a failed grasp (at 0.95, 7 of 80 ``medium`` runs on seeds 9000–9019 spent a subtask's budget on
chance where the model promised about 3 %). The run's total grows with it (3 subtasks' worth) and the Descriptor
may re-scan after every ``rescan_after_failures`` failures. ``medium`` (q = 0.25) gives 20 attempts per subtask,
``hard`` (q = 0.04) 140 (about 25 are spent on average; the rest covers the tail); ``easy`` keeps the base
budget. A failure of geometry (no IK, no path, an arm not allowed) spends none of
it, up to as many again (``Budgets.attempt_cap_per_subtask``); it is not repeated where the object lies, and when
no different strategy remains the run stops early.
LangGraph's recursion limit follows from the budget (``Budgets.recursion_limit``).
"""

from __future__ import annotations

import math
from dataclasses import replace

from mallvi.config import Budgets
from mallvi.sim_bridge.contingency_profile import ContingencyProfile, parse_contingency

MAX_ATTEMPTS_PER_SUBTASK = 200
TOTAL_PER_SUBTASK_BUDGET = 3
TARGET_RUN_SUCCESS = 0.99
TARGET_SUBTASK_SUCCESS = TARGET_RUN_SUCCESS ** (1.0 / TOTAL_PER_SUBTASK_BUDGET)


def attempt_success(profile: ContingencyProfile) -> float:
    """Probability that one grasp-and-place attempt suffers no fault."""
    return (1.0 - profile.grasp_miss - profile.grasp_slip) * (1.0 - profile.place_off - profile.knock_over)


def attempts_needed(q: float, target: float = TARGET_SUBTASK_SUCCESS, cap: int = MAX_ATTEMPTS_PER_SUBTASK) -> int:
    """The fewest attempts that reach ``target`` success when each succeeds with probability ``q`` (<= cap)."""
    if q >= 1.0:
        return 1
    if q <= 0.0:
        return cap
    return min(cap, max(1, math.ceil(math.log(1.0 - target) / math.log(1.0 - q))))


def budgets_for_contingency(spec: str | ContingencyProfile | None, base: Budgets | None = None) -> Budgets:
    """``base`` (default ``Budgets()``) widened for the level's fault rate; unchanged without faults.

    Raises ContingencySpecError for a level that cannot be parsed.
    """
    b = base or Budgets()
    if spec is None:
        return b
    profile = parse_contingency(spec) if isinstance(spec, str) else spec
    if not profile.injects_faults:
        return b
    n = max(b.max_attempts_per_subtask, attempts_needed(attempt_success(profile)))
    return replace(
        b, max_attempts_per_subtask=n,
        max_total_attempts=max(b.max_total_attempts, TOTAL_PER_SUBTASK_BUDGET * n),
        max_rescans_per_subtask=max(b.max_rescans_per_subtask, n // b.rescan_after_failures),
    )
