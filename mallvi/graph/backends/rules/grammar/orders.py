"""Orders stated by position instead of as a list: rows ("red leftmost, green in the middle, blue on the far
right", "blue on the left, then green, then red") and towers ("red at the bottom, then green, then blue on top",
"in the order blue, green, red from bottom to top").

The result is the objects in order (leftmost or bottom first); the grammar turns them into slots or stacking.
"""

from __future__ import annotations

import re
from typing import Literal

from mallvi.graph.agent_errors import RefusalError
from mallvi.graph.schemas import ObjectRef, SizeWord

Kind = Literal["row", "tower"]
_COLOURS = ("red", "green", "blue", "yellow", "black", "white", "orange", "purple", "pink", "brown", "gray", "cyan")
_SIZES: dict[str, SizeWord] = {"largest": "largest", "biggest": "largest", "big": "largest", "large": "largest",
                               "smallest": "smallest", "tiniest": "smallest", "small": "smallest",
                               "medium": "medium", "middle-sized": "medium", "mid": "medium"}
_END = r"(?: end| side| edge)?"
_ROW_POS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bleftmost\b|\b(?:on|at|to) the (?:far |very )?left" + _END + r"\b(?!\s+of\b)"), "first"),
    (re.compile(r"\brightmost\b|\b(?:on|at|to) the (?:far |very )?right" + _END + r"\b(?!\s+of\b)"), "last"),
    (re.compile(r"\bin the (?:middle|center|centre)\b|\b(?:in )?between\b"), "middle"),
]
_TOWER_POS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(?:at|on|as) (?:the )?(?:very )?(?:bottom|base)\b"), "first"),
    (re.compile(r"\b(?:at|on) (?:the )?(?:very )?top\b(?!\s+of\b)"), "last"),
    (re.compile(r"\bin the middle\b|\b(?:in )?between\b"), "middle"),
]
_SEGMENT_RE = re.compile(r"\s*(?:[,;:]|\band\b|\bwith\b)\s*")
_OBJECT_WORD = r"(?:the )?(?:" + "|".join(_COLOURS) + r"|it\b|them\b)"
_PLACEMENT = re.compile(r"\b(?:on|onto|on top of|into|in|next to|behind|under|left of|right of|in front of) "
                        + _OBJECT_WORD)
_VERB = re.compile(r"\b(?:pick|grab|take|lift|put|place|move|set|stack|hand|give|pass|drop|lower)\b")
_TOWER_WORD = re.compile(r"\b(?:tower|stack|pile)\b")


def _refs(segment: str, label: str) -> list[ObjectRef]:
    words = re.findall(r"[a-z]+", segment)
    out = [ObjectRef(phrase=f"the {w} {label}", color=w, label=label) for w in words if w in _COLOURS]
    if not out:
        out = [ObjectRef(phrase=f"the {_SIZES[w]} {label}", size=_SIZES[w], label=label) for w in words if w in _SIZES]
    return out


def _label(text: str) -> str:
    return "pad" if re.search(r"\bpads?\b", text) else "block"


def _vertical_list(text: str, label: str) -> list[ObjectRef] | None:
    """"stack ... in the order blue, green, red from bottom to top" / "from top to bottom: blue, green, red"."""
    m = re.search(r"\b(bottom|top) to (?:the )?(top|bottom)\b", text)
    if not (m and _TOWER_WORD.search(text)) or m.group(1) == m.group(2):
        return None
    refs = [r for r in _refs(text, label) if r.color]
    if len(refs) < 2:
        return None
    return refs if m.group(1) == "bottom" else list(reversed(refs))


def positional_order(text: str) -> tuple[Kind, list[ObjectRef]] | None:
    """The order a whole instruction states by positions, or None when it states none that way."""
    label = _label(text)
    vertical = _vertical_list(text, label)
    if vertical is not None:
        return "tower", vertical
    vertical_words = re.search(r"\b(?:at|on) (?:the )?(?:very )?(?:bottom|base)\b", text)
    kind: Kind = "tower" if _TOWER_WORD.search(text) or vertical_words else "row"
    if kind == "row" and not re.search(r"\b(?:left|right|leftmost|rightmost|row|line|arrange|order|sort|rank|middle|"
                                       r"centre|center)\b", text):
        return None  # "first X, then Y" with no row in sight is an order of actions, not of places
    patterns = _TOWER_POS if kind == "tower" else _ROW_POS
    items: list[tuple[ObjectRef, str | None]] = []
    for seg in _SEGMENT_RE.split(re.sub(r"\b(?:left|right) (?:arm|hand|gripper)s?\b", " ", text)):
        refs = _refs(seg, label)
        pos = next((p for pat, p in patterns if pat.search(seg)), None)
        if pos is None and re.match(r"(?:and )?then\b", seg):
            pos = "then"
        if pos is None and kind == "row" and re.search(r"\bfirst\b", seg):
            pos = "first"
        if len(refs) > 1 or _PLACEMENT.search(seg) or (pos == "then" and _VERB.search(seg)):
            return None  # a list, a placement or a sequence of actions: not a positional order
        if refs:
            items.append((refs[0], pos))
    if sum(p is not None for _, p in items) < 2:
        return None
    return kind, _assign(text, items, kind)


def _assign(text: str, items: list[tuple[ObjectRef, str | None]], kind: Kind) -> list[ObjectRef]:
    members: dict[str, ObjectRef] = {}
    for r, _ in items:
        members.setdefault(r.key(), r)
    sizes = {r.size for r in members.values()}
    if not any(r.color for r in members.values()) and {"largest", "smallest"} <= sizes and "medium" not in sizes:
        medium = ObjectRef(phrase="the medium block", size="medium", label=next(iter(members.values())).label)
        members[medium.key()] = medium
    n = len(members)
    rtl = kind == "row" and bool(re.search(r"\bright to (?:the )?left\b", text))
    slot: dict[str, int] = {}
    prev: int | None = None
    step = 1
    for r, pos in items:
        if pos is None:
            continue
        if pos == "first":
            i, step = (n - 1, -1) if rtl else (0, 1)
        elif pos == "last":
            i, step = (0, 1) if rtl else (n - 1, -1)
        elif pos == "middle":
            if n % 2 == 0:
                raise RefusalError(f"{r.phrase!r} cannot be in the middle of {n} objects ({text!r})")
            i = n // 2
        else:
            if prev is None:
                raise RefusalError(f"'then {r.phrase}' follows no placed object in {text!r}")
            i = prev + step
        if (r.key() in slot and slot[r.key()] != i) or i in slot.values() or not 0 <= i < n:
            raise RefusalError(f"contradictory order: {r.phrase!r} cannot take that place in {text!r}")
        slot[r.key()] = i
        prev = i
    free_slots = [i for i in range(n) if i not in slot.values()]
    free_members = [k for k in members if k not in slot]
    if len(free_members) == 1 and len(free_slots) == 1:
        slot[free_members[0]] = free_slots[0]
    elif free_members or free_slots:
        raise RefusalError(f"the order in {text!r} leaves places open; name where every object goes")
    ends_only = all(p in ("first", "last") for _, p in items if p is not None)
    if n == 2 and ends_only and any(r.color for r in members.values()):
        raise RefusalError(f"the order in {text!r} names only the two ends; say where every object goes, or use "
                           + ("'on top of'" if kind == "tower" else "'to the left of'"))
    return [members[k] for k in sorted(slot, key=lambda k: slot[k])]
