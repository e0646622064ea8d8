"""Groups of objects in an instruction: plurals ("the bottles", "cans", "the three bowls"), lists of different
objects ("the hamburg and frenchfries"), "them" for the last group, and counts the instruction states ("if there
is one bread on the table", "the three bowls").

A plural becomes one reference with ``every`` set: the plan is expanded to one subtask per matching object once
the scene is known (``graph/binding.py``). A stated count becomes ``count`` on the references of that kind, and a
scene with another number of them is refused.
"""

from __future__ import annotations

import re

from mallvi.graph.backends.rules.grammar.vocab import COLOURS, SIZE_WORDS, Ctx
from mallvi.graph.refs import LABEL_SYNONYMS
from mallvi.graph.schemas import ObjectRef

NUMBER_WORDS = {"one": 1, "a": 1, "an": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
#: plural nouns -> the singular the label synonyms know
PLURALS = {"bottles": "bottle", "cans": "can", "bowls": "bowl", "blocks": "block", "cubes": "cube",
           "boxes": "box", "mugs": "mug", "objects": "object", "items": "item", "things": "thing"}
_GENERIC = ("object", "thing", "item")
_CONDITION = re.compile(r"\bif there (?:is|are) (?:only )?(?:exactly )?(one|a single|a|an|two|three|four|five|six) "
                        r"([a-z]+?)s?(?: on the table)?\s*[,.;]\s*")


def stated_counts(text: str) -> tuple[str, dict[str, int]]:
    """Take out a condition on how many objects there are ("if there is one bread on the table, ...") and
    return the text without it and the count per label."""
    counts: dict[str, int] = {}
    m = _CONDITION.search(text)
    while m:
        label = LABEL_SYNONYMS.get(m.group(2), m.group(2))
        counts[label] = NUMBER_WORDS.get(m.group(1).replace("a single", "single"), 1)
        text = text[: m.start()] + text[m.end():]
        m = _CONDITION.search(text)
    return text, counts


def _label_of(word: str) -> str | None:
    word = PLURALS.get(word, word)
    return LABEL_SYNONYMS.get(word) if word in LABEL_SYNONYMS else None


def group_refs(fragment: str, ctx: Ctx) -> list[ObjectRef] | None:
    """The objects a fragment names when it names a group, else None (a single object, left to ``one_ref``).

    "them"/"they" -> the last group; "the bottles" -> every bottle; "the three bowls" -> every bowl, three of
    them; "the hamburg and frenchfries" / "the burger and the fries" -> one reference each.
    """
    words = re.findall(r"[a-z]+", fragment)
    if not words:
        return None
    if any(w in ("them", "they", "both") for w in words) and not any(w in COLOURS for w in words):
        return list(ctx.group) if ctx.group else None
    nouns = [w for w in words if _label_of(w) is not None and w not in _GENERIC]
    plural = [w for w in words if w in PLURALS and w not in ("objects", "items", "things")]
    if any(w in COLOURS or w in SIZE_WORDS for w in words):
        return None  # colour or size lists are the existing noun phrases' job
    count = next((NUMBER_WORDS[w] for w in words if w in NUMBER_WORDS and w not in ("a", "an")), None)
    if plural and len(nouns) == 1:
        label = _label_of(plural[0]) or plural[0]
        return [ObjectRef(phrase=fragment.strip(), label=label, every=True, count=count)]
    if len(nouns) >= 2 and re.search(r"\band\b|,", fragment):
        return [ObjectRef(phrase=f"the {w}", label=_label_of(w)) for w in nouns]
    return None


def with_counts(ref: ObjectRef, counts: dict[str, int]) -> ObjectRef:
    """``ref`` with the count the instruction states for its kind (a plural keeps its own)."""
    label = ref.label or "object"
    if label in counts and ref.count is None:
        return ref.model_copy(update={"count": counts[label]})
    return ref
