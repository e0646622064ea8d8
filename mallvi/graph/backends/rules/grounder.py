"""Rules Grounder: per object the candidate of a fresh detection pass that best fits what the scene memory says of
it (its kind and colour words in the candidate's label); of those, the first that no other object of the subtask
took (the node lists them nearest where the object was last seen first). Scores do not rank: a detector that
answers "bowl" with any round thing (a cup lying on its side) scores it by its own measure, not by the bowl's,
and of two alike objects the better-scored one is not more likely the one asked for."""

from __future__ import annotations

from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.schemas import Detection2D, SceneMemory, SceneObject, Subtask
from mallvi.perception.query_words import COLORS

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
    same_kind = not kinds or remembered.label.lower() in kinds
    return 2 * int(same_colour) + int(same_kind)


class RulesGrounder:
    def choose(
        self, subtask: Subtask, focus: list[str], scene: SceneMemory, candidates: dict[str, list[Detection2D]],
        attempt: int, log: CallLog,
    ) -> dict[str, Detection2D]:
        chosen: dict[str, Detection2D] = {}
        for oid in focus:
            remembered = scene.get(oid)
            cands = candidates.get(oid, [])
            best = max((fit(d, remembered) for d in cands), default=0)
            # alike candidates (two white bowls) are told apart by where each object was, not by score
            fitting = [d for d in cands if fit(d, remembered) == best]
            free = [d for d in fitting if d.box_xyxy not in {c.box_xyxy for c in chosen.values()}]
            if free or fitting:
                chosen[oid] = (free or fitting)[0]
        return chosen
