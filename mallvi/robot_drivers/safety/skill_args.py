"""Checks of skill arguments shared by the simulated and the real-rig skills, and the whole-plan check.

A skill's arguments come from a planner (a model, the rules, a benchmark agent) and are untrusted: each helper
returns the clean value or a ``Failure`` of kind ``BAD_PARAMETERS`` (``UNKNOWN_OBJECT`` for a name the world model
does not know), never raises. Inside a skill, NaN and infinity are left to the safety guard, which refuses them by
name. ``check_plan`` checks every argument of every call of a plan (types, finiteness, quaternion norms, gripper
openings, known keywords, arm tags, object names) before the first call runs, so that a malformed second call
cannot leave the first one done: the Actor and the benchmark's executor run it on every plan, on any Station.
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import math
import types
import typing
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from mallvi.contracts.errors import UnknownObjectError
from mallvi.contracts.geometry import ArmSide, parse_arm, quat_problem
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


# -- the whole-plan check ----------------------------------------------------------------------------------------
#
# Every argument of every call of a plan is checked before its first call moves anything. The table comes from
# one place, the skills' declared signatures (``contracts.skills.SkillAPI``): a parameter's annotation says how it
# is checked (``ArmSide``: an arm tag; ``float``: a finite number; ``int | None``: an index; ``bool``; a
# ``Literal``: one of its values; ``str``: text, the ``actor`` an object the world knows; ``Sequence[float]``: a
# list of finite numbers shaped as ``VECTOR_SHAPES`` says). A skill added to ``SkillAPI`` is checked with no
# change here unless it brings a new kind of parameter (``skill_signatures`` then raises, and its unit test fails).

#: list-valued parameters by name: the lengths allowed and where quaternions [w, x, y, z] and gripper openings sit
VECTOR_SHAPES: dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = {
    "target_pose": ((3, 7), (3,), ()),  # [x, y, z] or [x, y, z, qw, qx, qy, qz]
    "quat": ((4,), (0,), ()),
    "action": ((16,), (3, 11), (7, 15)),  # [left xyz, quat, gripper, right xyz, quat, gripper]
}
#: number-valued parameters that are gripper openings (0 closed .. 1 open)
GRIPPER_PARAMS = frozenset({"gripper_pos", "pos"})
#: the parameter that names the object a skill acts on
OBJECT_PARAM = "actor"

Check = Callable[[object, str, "Collection[str] | None"], "Failure | None"]


@dataclass(frozen=True)
class Param:
    """One declared parameter of a skill: its name, whether a call must give it, and its check."""

    name: str
    required: bool
    check: Check


def _arm(value: object, what: str, objects: Collection[str] | None) -> Failure | None:
    side = resolve_arm(value)
    return side if isinstance(side, Failure) else None


def _finite(value: object, what: str) -> Failure | None:
    x = as_number(value, what)
    if isinstance(x, Failure):
        return x
    return None if math.isfinite(x) else Failure(BAD, f"{what} must be a finite number, got {value!r}")


def _number(value: object, what: str, objects: Collection[str] | None) -> Failure | None:
    bad = _finite(value, what)
    if bad is None and what in GRIPPER_PARAMS and not 0.0 <= float(value) <= 1.0:  # type: ignore[arg-type]
        return Failure(BAD, f"{what} is a gripper opening within 0 (closed) .. 1 (open), got {value!r}")
    return bad


def _index(value: object, what: str, objects: Collection[str] | None) -> Failure | None:
    return None if is_index(value) else Failure(BAD, f"{what} must be an integer, got {value!r}")


def _flag(value: object, what: str, objects: Collection[str] | None) -> Failure | None:
    ok = isinstance(value, bool) or (is_index(value) and value in (0, 1))
    return None if ok else Failure(BAD, f"{what} must be true or false, got {value!r}")


def _text(value: object, what: str, objects: Collection[str] | None) -> Failure | None:
    if not isinstance(value, str) or not value.strip():
        return Failure(BAD, f"{what} must be a non-empty name, got {value!r}")
    if what == OBJECT_PARAM and objects is not None and value not in objects:
        known = ", ".join(sorted(objects)) or "none"
        return Failure(FailureKind.UNKNOWN_OBJECT, f"unknown object {value!r} ({what}); objects are {known}")
    return None


def _one_of(choices: tuple[object, ...]) -> Check:
    def check(value: object, what: str, objects: Collection[str] | None) -> Failure | None:
        if value in choices and isinstance(value, str):
            return None
        return Failure(BAD, f"{what} must be one of {', '.join(map(repr, choices))}, got {value!r}")

    return check


def _vector(value: object, what: str, objects: Collection[str] | None) -> Failure | None:
    lengths, quats, grippers = VECTOR_SHAPES.get(what, ((), (), ()))
    if not lengths:  # a list parameter of no declared shape: any length
        lengths = (len(value),) if isinstance(value, Sequence | np.ndarray) and not isinstance(value, str) else (1,)
    values = as_numbers(value, what, lengths)
    if isinstance(values, Failure):
        return values
    if not all(math.isfinite(v) for v in values):
        return Failure(BAD, f"{what} must contain finite numbers only, got {values}")
    for start in quats:
        if len(values) >= start + 4 and (why := quat_problem(values[start:start + 4], what)) is not None:
            return Failure(BAD, why)
    for at in grippers:
        if not 0.0 <= values[at] <= 1.0:
            return Failure(BAD, f"{what}: the gripper opening at position {at} must be within 0..1, "
                                f"got {values[at]}")
    return None


def _or_none(check: Check) -> Check:
    """``check`` for an optional parameter (``X | None``): None is allowed."""

    def optional(value: object, what: str, objects: Collection[str] | None) -> Failure | None:
        return None if value is None else check(value, what, objects)

    return optional


def _check_for(annotation: object, name: str, skill: str) -> Check:
    """The check of a parameter annotated ``annotation`` (TypeError for an annotation this table does not know)."""
    args = typing.get_args(annotation)
    optional = typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in args
    kind = next((a for a in args if a is not type(None)), None) if optional and len(args) == 2 else annotation
    check: Check | None = None
    if kind == ArmSide:
        check = _arm
    elif kind in (float, int, bool, str):
        check = {float: _number, int: _index, bool: _flag, str: _text}[kind]
    elif typing.get_origin(kind) is typing.Literal:
        check = _one_of(typing.get_args(kind))
    elif typing.get_origin(kind) in (Sequence, collections.abc.Sequence) and typing.get_args(kind) == (float,):
        check = _vector
    if check is not None:
        return _or_none(check) if optional else check
    raise TypeError(f"{skill}({name}: {annotation}): no argument check for this kind of parameter; add one to "
                    f"mallvi/robot_drivers/safety/skill_args.py")


@functools.cache
def skill_signatures() -> dict[str, dict[str, Param]]:
    """Every skill of ``SkillAPI`` and its parameters with their checks, read from the declared signatures."""
    from mallvi.contracts.skills import SkillAPI

    table: dict[str, dict[str, Param]] = {}
    for skill, fn in inspect.getmembers(SkillAPI, inspect.isfunction):
        if skill.startswith("_"):
            continue
        hints = typing.get_type_hints(fn)
        params: dict[str, Param] = {}
        for p in list(inspect.signature(fn).parameters.values())[1:]:  # without self
            params[p.name] = Param(p.name, p.default is inspect.Parameter.empty, _check_for(hints[p.name], p.name,
                                                                                           skill))
        table[skill] = params
    return table


def check_call(skill: str, kwargs: Mapping[str, object], objects: Collection[str] | None = None) -> Failure | None:
    """Why one call ``skill(**kwargs)`` must not run (an unknown skill or keyword, a missing or malformed
    argument, an object ``objects`` does not hold), or None. ``objects`` None: object names are not looked up."""
    params = skill_signatures().get(skill)
    if params is None:
        return Failure(BAD, f"unknown skill {skill!r}; skills are {', '.join(sorted(skill_signatures()))}")
    unknown = sorted(set(kwargs) - set(params))
    if unknown:
        return Failure(BAD, f"{skill} has no argument(s) {', '.join(map(repr, unknown))}; it takes "
                            f"{', '.join(params)}")
    for p in params.values():
        if p.name not in kwargs:
            if p.required:
                return Failure(BAD, f"{skill} needs the argument {p.name!r}")
            continue
        bad = p.check(kwargs[p.name], p.name, objects)
        if bad is not None:  # each check's message names the argument
            return Failure(bad.kind, f"{skill}: {bad.message}")
    return None


def check_plan(calls: Sequence[tuple[str, Mapping[str, object]]],
               objects: Collection[str] | None = None) -> tuple[int, Failure] | None:
    """The first call of a plan (its 0-based index) that must not run, and why; None when every argument of
    every call is well formed. Run before the plan's first call, so a malformed later call moves nothing."""
    for i, (skill, kwargs) in enumerate(calls):
        bad = check_call(skill, kwargs, objects)
        if bad is not None:
            return i, bad
    return None
