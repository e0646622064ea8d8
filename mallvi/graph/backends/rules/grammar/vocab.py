"""The rules grammar's words: colours, size words, verbs, spatial relations, and noun phrases -> object refs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mallvi.graph.agent_errors import RefusalError
from mallvi.graph.refs import LABEL_SYNONYMS
from mallvi.graph.schemas import ArmHint, ObjectRef, SizeWord

COLOURS = ("red", "green", "blue", "yellow", "black", "white", "orange", "purple", "pink", "brown", "gray", "cyan")


SIZE_WORDS: dict[str, SizeWord] = {
    "largest": "largest", "biggest": "largest", "large": "large", "big": "large", "larger": "large",
    "bigger": "large", "smallest": "smallest", "tiniest": "smallest", "small": "small", "smaller": "small",
    "little": "small", "medium": "medium", "middle": "medium", "mid-sized": "medium", "midsize": "medium",
}


PICK_VERBS = ("pick up", "pick", "grab", "grasp", "take", "lift", "raise", "hold", "get")


HANG_VERBS = ("hang",)


TURN_VERBS = ("rotate", "turn", "spin")


PLACE_VERBS = ("put", "place", "move", "set", "drop", "lay", "position", "bring", "transfer", "carry", "relocate",
               "shift", "slide", "lower")


STACK_VERBS = ("stack", "pile")


ARRANGE_VERBS = ("arrange", "rank", "sort", "order", "line up", "align", "organize", "organise")


HANDOVER_VERBS = ("hand over", "handover", "hand off", "pass", "give", "hand", "transfer")


ALL_VERBS = (PICK_VERBS + PLACE_VERBS + STACK_VERBS + ARRANGE_VERBS + HANDOVER_VERBS + HANG_VERBS + TURN_VERBS
             + ("build", "make", "use"))


# longest first: "on top of" before "on"
RELATIONS: list[tuple[str, str]] = [
    ("to the left of", "left_of"), ("on the left of", "left_of"), ("left of", "left_of"),
    ("to the right of", "right_of"), ("on the right of", "right_of"), ("right of", "right_of"),
    ("in front of", "front_of"), ("behind", "behind"), ("next to", "next_to"), ("beside", "next_to"),
    ("near", "next_to"), ("on top of", "on"), ("onto", "on"), ("on to", "on"), ("upon", "on"), ("atop", "on"),
    ("on", "on"), ("into", "in"), ("inside", "in"), ("in", "in"), ("underneath", "under"), ("beneath", "under"),
    ("below", "under"), ("under", "under"),
]


RELATION_RE = re.compile(r"\b(" + "|".join(re.escape(r) for r, _ in RELATIONS) + r")\b")


REL_MAP = dict(RELATIONS)


@dataclass
class Ctx:
    last: ObjectRef | None = None
    arm: ArmHint | None = None
    group: list[ObjectRef] = field(default_factory=list)  # the last group of objects named together
    mode: ArmHint | None = None  # the arms the whole instruction names ("use both arms", "use one arm")
    counts: dict[str, int] = field(default_factory=dict)  # label -> how many the instruction says there are
    count: int | None = None  # how many blocks the instruction says there are ("there are four blocks")


def noun_phrases(fragment: str, ctx: Ctx) -> list[ObjectRef]:
    """All object references in a fragment ("the red, green and blue blocks" -> three refs)."""
    words = re.findall(r"[a-z\-]+", fragment)
    if any(w in ("it", "them") for w in words) and ctx.last is not None and not any(w in COLOURS for w in words):
        return [ctx.last]
    colours = [w for w in words if w in COLOURS]
    sizes = [SIZE_WORDS[w] for w in words if w in SIZE_WORDS]
    labels = [w for w in words if w in LABEL_SYNONYMS and w not in ("one", "object", "thing", "item")]
    label = labels[-1] if labels else None
    if label is None and ("one" in words or colours or sizes) and ctx.last is not None:
        label = ctx.last.label
    if label is not None:
        label = LABEL_SYNONYMS.get(label, label)
    phrase = fragment.strip()
    if len(colours) > 1:
        return [ObjectRef(phrase=f"the {c} {label or 'object'}", color=c, label=label) for c in colours]
    if len(sizes) > 1:
        return [ObjectRef(phrase=f"the {s} {label or 'object'}", size=s, label=label) for s in sizes]
    if colours or sizes or labels:
        return [ObjectRef(phrase=phrase, color=colours[0] if colours else None,
                          size=sizes[0] if sizes else None, label=label)]
    if any(w in ("object", "thing", "item") for w in words):  # "the object": the one the scene leaves unnamed
        return [ObjectRef(phrase=phrase, label="object")]
    return []


#: words an object phrase may hold besides colours, sizes and object names (anything else is not understood)
_PHRASE_WORDS = frozenset((
    "the", "a", "an", "this", "that", "these", "those", "your", "its", "my", "our", "it", "them", "one", "ones",
    "please", "now", "then", "also", "too", "again", "down", "up", "over", "back", "here", "just", "as", "well",
    "sized", "size", "coloured", "colored", "kind", "so", "thanks", "target",
))


def unknown_words(fragment: str) -> list[str]:
    """Words of an object phrase the grammar does not understand ("rotate", "cm", "side"); adverbs in -ly pass."""
    return [w for w in re.findall(r"[a-z0-9]+", fragment)
            if w not in _PHRASE_WORDS and w not in COLOURS and w not in SIZE_WORDS and w not in LABEL_SYNONYMS
            and not w.endswith("ly")]


def one_ref(fragment: str, ctx: Ctx, role: str, clause: str) -> ObjectRef:
    """The one object a phrase names; RefusalError when it names none, several, or has words not understood."""
    place = re.search(r"\b(?:middle|center|centre|edge|corner|side|end) of the table\b", fragment)
    if place:
        raise RefusalError(f"not understood: {place.group(0)!r} is a place, not an object ({clause!r})")
    extra = unknown_words(fragment)
    if extra:
        raise RefusalError(f"not understood: {' '.join(extra)!r} in {clause!r}")
    refs = noun_phrases(fragment, ctx)
    if len(refs) != 1:
        what = "no object" if not refs else f"{len(refs)} objects"
        raise RefusalError(f"cannot tell which object is the {role} in {clause!r} ({what} found in {fragment!r})")
    return refs[0]


def find_verb(clause: str, verbs: tuple[str, ...]) -> re.Match[str] | None:
    return re.search(r"\b(" + "|".join(re.escape(v) for v in verbs) + r")\b", clause)

