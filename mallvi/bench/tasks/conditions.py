"""Per-condition success results: which condition of a task's check held, and by how much a failed one missed."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: the original benchmark's nominal table top above its floor (metres). Our world frame is the original's: the
#: floor at z = 0 and the table top at 0.74 + b with the same b ~ U[-0.03, 0] per episode, so a height the original
#: gives in absolute terms (0.92, 0.85, 0.80 m) is the same world z here; one it gives as 0.74 + b + h is h above
#: our table top.
ORIGINAL_TABLE_TOP_M = 0.74


def above_original_table(z_original_m: float) -> float:
    """A height the original states as ``z + b`` (``b`` its table's offset) as a height above the table top."""
    return z_original_m - ORIGINAL_TABLE_TOP_M


@dataclass(frozen=True)
class Condition:
    """One condition of a success check: what was measured against which limit, and whether it held.

    ``kind`` is ``"<"`` (measured must stay below limit), ``">"`` (must exceed it) or ``"flag"`` (a yes/no fact,
    no measurement).
    """

    name: str
    held: bool
    measured: float | None = None
    limit: float | None = None
    kind: str = "flag"
    unit: str = "m"

    @property
    def miss(self) -> float | None:
        """How far a failed measured condition is past its limit (None when it held or has no measurement)."""
        if self.held or self.measured is None or self.limit is None:
            return None
        return abs(self.measured - self.limit)

    def describe(self) -> str:
        """One line for a person, e.g. ``bread-pan |dx| 0.052 m (< 0.035 m): missed by 0.017 m``."""
        state = "held" if self.held else "failed"
        if self.measured is None or self.limit is None:
            return f"{self.name}: {state}"
        text = f"{self.name} {self.measured:.4g} {self.unit} ({self.kind} {self.limit:.4g} {self.unit})"
        miss = self.miss
        return f"{text}: missed by {miss:.3g} {self.unit}" if miss is not None else f"{text}: held"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "held": self.held}
        if self.measured is not None and self.limit is not None:
            out.update(measured=round(self.measured, 5), limit=round(self.limit, 5), kind=self.kind, unit=self.unit)
            if self.miss is not None:
                out["miss"] = round(self.miss, 5)
        return out


def below(name: str, measured: float, limit: float, unit: str = "m") -> Condition:
    """Holds when ``measured < limit``."""
    return Condition(name, bool(measured < limit), float(measured), float(limit), "<", unit)


def above(name: str, measured: float, limit: float, unit: str = "m") -> Condition:
    """Holds when ``measured > limit``."""
    return Condition(name, bool(measured > limit), float(measured), float(limit), ">", unit)


def flag(name: str, held: bool) -> Condition:
    """A yes/no condition (e.g. a gripper open, an object held)."""
    return Condition(name, bool(held))


@dataclass(frozen=True)
class Evaluation:
    """A task's success check, condition by condition; success when every condition held."""

    conditions: tuple[Condition, ...]

    @classmethod
    def of(cls, conditions: Iterable[Condition]) -> Evaluation:
        return cls(tuple(conditions))

    @property
    def success(self) -> bool:
        return bool(self.conditions) and all(c.held for c in self.conditions)

    @property
    def failed(self) -> tuple[Condition, ...]:
        return tuple(c for c in self.conditions if not c.held)

    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.conditions]
