"""Contingency levels: how often each simulated skill goes wrong, and how (after DualTHOR's contingency mechanism).

A level gives, per fault kind, the probability that a call of the affected skill suffers it:

- ``grasp_miss``  — the gripper closes on nothing (the object is pushed aside while the fingers close);
  the grasp reports failure, as a real gripper that closes fully would.
- ``grasp_slip``  — the grasp succeeds, then the object slips out and drops while the arm moves on; the skill
  result still says success: only a fresh observation (the Reflector) can notice.
- ``place_off``   — the object lands 4–8 cm off the target; reported as success.
- ``knock_over``  — after a place the object is knocked over; reported as success.

``easy`` never injects a fault; ``medium`` makes each grasp and each place succeed with probability 0.5 and
``hard`` with probability 0.2 (the failure mode is drawn among the kinds of that skill). A custom level is
written ``grasp_miss=0.1,grasp_slip=0.2,place_off=0.1,knock_over=0.05``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

FAULT_KINDS = ("grasp_miss", "grasp_slip", "place_off", "knock_over")
GRASP_FAULTS = ("grasp_miss", "grasp_slip")
PLACE_FAULTS = ("place_off", "knock_over")


class ContingencySpecError(ValueError):
    """A contingency level that cannot be parsed."""


@dataclass(frozen=True)
class ContingencyProfile:
    """Per-call fault probabilities of one contingency level."""

    name: str
    grasp_miss: float = 0.0
    grasp_slip: float = 0.0
    place_off: float = 0.0
    knock_over: float = 0.0

    def __post_init__(self) -> None:
        for kind in FAULT_KINDS:
            p = getattr(self, kind)
            if not (0.0 <= p <= 1.0) or not np.isfinite(p):
                raise ContingencySpecError(f"{kind} probability must be within 0..1, got {p}")
        if self.grasp_miss + self.grasp_slip > 1.0 + 1e-9:
            raise ContingencySpecError("grasp_miss + grasp_slip must not exceed 1")
        if self.place_off + self.knock_over > 1.0 + 1e-9:
            raise ContingencySpecError("place_off + knock_over must not exceed 1")

    @property
    def injects_faults(self) -> bool:
        return any(getattr(self, k) > 0 for k in FAULT_KINDS)

    def probabilities(self) -> dict[str, float]:
        return {k: float(getattr(self, k)) for k in FAULT_KINDS}


def _even(name: str, success: float) -> ContingencyProfile:
    fail = 1.0 - success
    return ContingencyProfile(name, fail / 2, fail / 2, fail / 2, fail / 2)


LEVELS: dict[str, ContingencyProfile] = {
    "none": ContingencyProfile("none"),
    "easy": ContingencyProfile("easy"),
    "medium": _even("medium", 0.5),
    "hard": _even("hard", 0.2),
}


def parse_contingency(spec: str) -> ContingencyProfile:
    """A named level (none, easy, medium, hard) or ``kind=p,kind=p`` with kinds from FAULT_KINDS."""
    text = spec.strip().lower()
    if text in LEVELS:
        return LEVELS[text]
    if "=" not in text:
        raise ContingencySpecError(
            f"unknown contingency level {spec!r}; use one of {', '.join(LEVELS)} or e.g. 'grasp_slip=0.3,place_off=0.1'"
        )
    probs: dict[str, float] = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        key = key.strip()
        if key not in FAULT_KINDS:
            raise ContingencySpecError(f"unknown fault kind {key!r}; known kinds: {', '.join(FAULT_KINDS)}")
        try:
            probs[key] = float(value)
        except ValueError as e:
            raise ContingencySpecError(f"{key} needs a probability, got {value!r}") from e
    return ContingencyProfile("custom", **probs)


def fault_rng(task: str, seed: int, level: str) -> np.random.Generator:
    """The generator for one (task, seed, level) episode: the same triple always draws the same faults."""
    digest = hashlib.sha256(f"{task}|{seed}|{level}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def draw_fault(rng: np.random.Generator, profile: ContingencyProfile, skill: str) -> str | None:
    """The fault a call of ``skill`` ("grasp" or "place") suffers, or None. Always consumes one draw."""
    u = float(rng.random())
    kinds = GRASP_FAULTS if skill == "grasp" else PLACE_FAULTS if skill == "place" else ()
    acc = 0.0
    for kind in kinds:
        acc += getattr(profile, kind)
        if u < acc:
            return kind
    return None
