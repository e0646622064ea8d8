"""Checks on what the grammar made of an instruction: every named object used, nothing physically impossible.

These turn a partial or impossible reading into a refusal that says what was not understood, so a plan never
executes half an instruction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from mallvi.graph.agent_errors import RefusalError
from mallvi.graph.schemas import ObjectRef, Predicate, Subtask

_SIZE_CLASS = {"largest": "large", "large": "large", "smallest": "small", "small": "small", "medium": "medium"}


def refs_in(subtasks: list[Subtask]) -> list[ObjectRef]:
    out: list[ObjectRef] = []
    for s in subtasks:
        out += [s.obj, *([s.target] if s.target else []), *s.group]
    return out


def check_all_named_used(clause: str, new: list[Subtask], colours: tuple[str, ...],
                         sizes: Mapping[str, str]) -> None:
    """Every colour and size word of ``clause`` must name an object of the subtasks made from it."""
    words = re.findall(r"[a-z]+", clause)
    refs = refs_in(new)
    used_colours = {r.color for r in refs}
    used_sizes = {_SIZE_CLASS[r.size] for r in refs if r.size}
    for w in words:
        if w in colours and w not in used_colours:
            raise RefusalError(f"not understood: what to do with the {w} object in {clause!r}")
        if w in sizes and _SIZE_CLASS[sizes[w]] not in used_sizes and not used_sizes.isdisjoint({"large", "small"}):
            raise RefusalError(f"not understood: what to do with the {w} object in {clause!r}")


def check_positional_refs(clause: str, new: list[Subtask]) -> None:
    """A reference by position ("the leftmost block") cannot be resolved before the scene is seen."""
    for r in refs_in(new):
        if r.color is None and re.search(r"\b(?:leftmost|rightmost|nearest|closest|farthest|furthest|second|third|"
                                         r"heaviest|lightest|tallest|shortest|other)\b", r.phrase):
            raise RefusalError(f"cannot tell which object {r.phrase.strip()!r} is: objects are named by colour or "
                               f"size, not by position ({clause!r})")


def check_physical(subtasks: list[Subtask], goal: list[Predicate]) -> None:
    """Refuse moving a pad (a flat target lying on the table) and two objects resting on one block."""
    for s in subtasks:
        if s.obj.label == "pad":
            raise RefusalError(f"impossible: {s.obj.phrase!r} is a flat target on the table; the arms cannot pick "
                               f"it up ({s.text!r})")
    on_block: dict[str, set[str]] = {}
    for p in goal:
        if p.relation == "on" and p.args[1].endswith("_block"):
            on_block.setdefault(p.args[1], set()).add(p.args[0])
    for target, objs in on_block.items():
        if len(objs) > 1:
            raise RefusalError(f"impossible: {' and '.join(sorted(objs))} cannot both rest on {target} (one block "
                               "holds one block)")


def check_excluded(excluded: str | None, subtasks: list[Subtask], colours: tuple[str, ...]) -> None:
    """ "..., but not the blue one": the plan must leave that object alone."""
    if excluded is None:
        return
    named = [w for w in re.findall(r"[a-z]+", excluded) if w in colours]
    if not named or any(r.color in named for r in refs_in(subtasks)):
        raise RefusalError(f"negations are not understood: 'but not {excluded}'")
