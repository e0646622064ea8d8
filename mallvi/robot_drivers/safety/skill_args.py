"""Checks of skill arguments shared by the simulated and the real-rig skills.

A skill's arguments come from a planner (a model, the rules, a benchmark agent) and are untrusted: each helper
returns the clean value or a ``Failure`` of kind ``BAD_PARAMETERS`` (``UNKNOWN_OBJECT`` for a name the world model
does not know), never raises. NaN and infinity are left to the safety guard, which refuses them by name.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mallvi.contracts.errors import UnknownObjectError
from mallvi.contracts.geometry import ArmSide, parse_arm
from mallvi.contracts.skills import Failure, FailureKind
from mallvi.contracts.world_model import ObjectInfo, WorldModel

BAD = FailureKind.BAD_PARAMETERS


def resolve_arm(arm_tag: object) -> ArmSide | Failure:
    """"left" or "right" (case and spaces ignored), else a ``BAD_PARAMETERS`` failure."""
    if not isinstance(arm_tag, str):
        return Failure(BAD, f"arm must be 'left' or 'right', got {arm_tag!r}")
    try:
        return parse_arm(arm_tag)
    except ValueError as e:
        return Failure(BAD, str(e))


def resolve_object(world_model: WorldModel, name: object) -> ObjectInfo | Failure:
    """The world model's entry for ``name``; ``UNKNOWN_OBJECT`` when it has none."""
    if not isinstance(name, str):
        return Failure(BAD, f"an object name must be text, got {name!r}")
    try:
        return world_model.get_object(name)
    except UnknownObjectError as e:
        return Failure(FailureKind.UNKNOWN_OBJECT, str(e))


def as_number(value: object, what: str) -> float | Failure:
    """A real number (int or float, not text or a bool); NaN/inf pass through for the guard to refuse."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        return Failure(BAD, f"{what} must be a number, got {value!r}")
    return float(value)


def as_numbers(values: object, what: str, lengths: Sequence[int]) -> list[float] | Failure:
    """A list of real numbers whose length is one of ``lengths``."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        return Failure(BAD, f"{what} must be a list of {' or '.join(map(str, lengths))} numbers, got {values!r}")
    out: list[float] = []
    for v in values:
        x = as_number(v, what)
        if isinstance(x, Failure):
            return Failure(BAD, f"{what} must be a list of numbers, got {values!r}")
        out.append(x)
    if len(out) not in lengths:
        return Failure(BAD, f"{what} must have {' or '.join(map(str, lengths))} numbers, got {len(out)}")
    return out


def first_failure(*values: object) -> Failure | None:
    """The first of ``values`` that is a ``Failure``, or None."""
    return next((v for v in values if isinstance(v, Failure)), None)


def gripper_args(arm_tag: object, pos: object) -> tuple[ArmSide, float] | Failure:
    """The arm and the opening of an ``open_gripper``/``close_gripper`` call, or why they are malformed."""
    side = resolve_arm(arm_tag)
    opening = as_number(pos, "gripper position")
    if isinstance(side, Failure):
        return side
    if isinstance(opening, Failure):
        return opening
    return side, opening


def is_index(value: object) -> bool:
    """An integer index (not a bool)."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool)
