"""A cross-shaped arrangement stated by positions: "arrange them to a cross shape. The red block should be on the
left. The black block should be on the center. The blue block should be on the right. The green should be
inside. The yellow should be closest to you."

The five places of a cross (``schemas.CROSS_SLOTS``): the centre, left and right of it, the far arm (away from the
robot: "inside", "at the back", "farthest from you") and the near arm ("closest to you", "in front").
"""

from __future__ import annotations

import re

from mallvi.graph.agent_errors import RefusalError
from mallvi.graph.schemas import CROSS_SLOTS, ArmHint, ObjectRef, Predicate, Subtask

_COLOURS = ("red", "green", "blue", "yellow", "black", "white", "orange", "purple", "pink", "brown", "gray", "cyan")
_PLACES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(?:on|in|at) the (?:center|centre|middle)\b|\bcentral\b"), "center"),
    (re.compile(r"\b(?:on|at|to) the left\b(?!\s+of)"), "left"),
    (re.compile(r"\b(?:on|at|to) the right\b(?!\s+of)"), "right"),
    (re.compile(r"\binside\b|\b(?:at|to) the (?:back|top)\b|\b(?:farthest|furthest) (?:from|away)\b|\bbehind\b"),
     "far"),
    (re.compile(r"\b(?:closest|nearest) to (?:you|the robot|me)\b|\bin (?:the )?front\b|\b(?:at|to) the bottom\b"),
     "near"),
]


def cross_order(text: str) -> dict[str, ObjectRef] | None:
    """Place name -> the block that goes there, when the instruction asks for a cross; None otherwise."""
    if not re.search(r"\bcross\b", text):
        return None
    label = "block"
    by_place: dict[str, ObjectRef] = {}
    for seg in re.split(r"[,.;]|\bthen\b", text):
        colours = [w for w in re.findall(r"[a-z]+", seg) if w in _COLOURS]
        places = [p for pat, p in _PLACES if pat.search(seg)]
        if not colours and not places:
            continue
        if len(colours) != 1 or len(places) != 1:
            if colours and places:
                raise RefusalError(f"cannot tell where each block of the cross goes in {seg.strip()!r}")
            continue
        if places[0] in by_place:
            raise RefusalError(f"contradictory cross: two blocks are to go {places[0]} ({text!r})")
        by_place[places[0]] = ObjectRef(phrase=f"the {colours[0]} {label}", color=colours[0], label=label)
    missing = [p for p in CROSS_SLOTS if p not in by_place]
    if missing:
        raise RefusalError(f"the cross leaves places open ({', '.join(missing)}); say where every block goes")
    if len({r.key() for r in by_place.values()}) != len(by_place):
        raise RefusalError(f"impossible: a block is to go to two places of the cross ({text!r})")
    return by_place


def cross_subtasks(text: str, by_place: dict[str, ObjectRef], arm: ArmHint | None) -> list[Subtask]:
    """One slot subtask per block, the centre first; each checks its side of the centre block."""
    group = [by_place[p] for p in CROSS_SLOTS]
    centre = by_place["center"]
    side_of_centre = {"left": "left_of", "right": "right_of", "far": "behind", "near": "front_of"}
    out: list[Subtask] = []
    for i, place in enumerate(CROSS_SLOTS):
        r = by_place[place]
        post = ([Predicate(relation=side_of_centre[place], args=[r.key(), centre.key()])]  # type: ignore[arg-type]
                if place != "center" else [])
        out.append(Subtask(text=f"{text} [{place} of the cross: {r.phrase}]", action="move", obj=r, relation="slot",
                           group=group, slot=i, layout="cross", arm_hint=arm, post=post))
    return out
