"""Rules Grounder: per object the candidate of a fresh detection pass that fits what the scene memory says of it
(its colour and its kind, in the candidate's label, must both agree: a shape word agrees with any kind, a kind
with another of its grasp category); of those not taken by another object of the subtask, the first (the node
lists them nearest where the object was last seen first); none when none agrees (the object is then reported
lost, never swapped for another thing).
Scores do not rank: a detector that answers "bowl" with any round thing (a cup lying on its side) scores it by its
own measure, not by the bowl's, and of two alike objects the better-scored one is not more likely the one asked
for."""

from __future__ import annotations

from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.schemas import Detection2D, SceneMemory, SceneObject, Subtask
from mallvi.perception.query_words import CATEGORY_OF_LABEL, COLORS

#: the fit of a candidate whose colour and kind agree (see ``fit``)
AGREES = 3
#: shape words a weight-free detector gives anything of that outline (a bowl's rim reads "round")
GENERIC_SHAPES = frozenset({"round", "object"})


def fit(candidate: Detection2D, remembered: SceneObject | None) -> int:
    """How well the candidate's label agrees with the remembered object: 2 for its colour (an object seen
    without one agrees with a candidate that has none), plus 1 unless it names another kind of thing ("bowl" and
    "bottle" disagree; "round" agrees with either)."""
    if remembered is None:
        return 0
    words = candidate.label.lower().split()
    colour = [w for w in words if w in COLORS]
    kinds = [w for w in words if w not in COLORS and w not in GENERIC_SHAPES]
    same_colour = colour == [remembered.color.lower()] if remembered.color else not colour
    same_kind = not kinds or any(_alike(remembered.label.lower(), k) for k in kinds)
    return 2 * int(same_colour) + int(same_kind)


def _alike(kind: str, other: str) -> bool:
    """Whether two kind words may name one thing: the same word, or two of one grasp category (a detector's flat
    "block" is the "pad" its measured extent made of it; "bottle" and "bowl" are of two)."""
    category = CATEGORY_OF_LABEL.get(kind)
    return kind == other or (category is not None and category == CATEGORY_OF_LABEL.get(other))


def _identity(d: Detection2D) -> tuple[object, ...]:
    """What makes two candidates one detection: the same box from the same source under the same label."""
    return (d.box_xyxy, d.source, d.label)


class RulesGrounder:
    def choose(
        self, subtask: Subtask, focus: list[str], scene: SceneMemory, candidates: dict[str, list[Detection2D]],
        attempt: int, log: CallLog,
    ) -> dict[str, Detection2D]:
        chosen: dict[str, Detection2D] = {}
        for oid in focus:
            remembered = scene.get(oid)
            taken = {_identity(c) for c in chosen.values()}
            # another object's detection, or one of another colour or kind, is not this object: none is chosen then
            # (a bowl still in the hand after a failed place is not in the image, the node knows where the hand is;
            # "the object" hidden by an arm is not the distractor beside it that a generic query also answers)
            cands = [d for d in candidates.get(oid, []) if _identity(d) not in taken
                     and (remembered is None or fit(d, remembered) >= AGREES)]
            best = max((fit(d, remembered) for d in cands), default=0)
            # alike candidates (two white bowls) are told apart by where each object was, not by score
            fitting = [d for d in cands if fit(d, remembered) == best]
            if fitting:
                chosen[oid] = fitting[0]
        return chosen
