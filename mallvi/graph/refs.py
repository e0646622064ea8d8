"""An instruction's object references: collecting them from a plan and resolving them against a list of objects
(perceived or simulator truth)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mallvi.graph.schemas import ObjectRef, Plan, SceneObject, Subtask

#: words that name the same kind of object
LABEL_SYNONYMS: dict[str, str] = {
    "block": "block", "cube": "block", "box": "block", "brick": "block", "blocks": "block", "cubes": "block",
    "boxes": "block", "bowl": "bowl", "bowls": "bowl", "plate": "plate", "dish": "plate", "cup": "cup",
    "mug": "cup", "can": "can", "cans": "can", "basket": "basket", "tray": "tray", "bin": "basket",
    "container": "basket", "ball": "ball", "sphere": "ball", "object": "object", "thing": "object",
    "item": "object", "one": "object", "pad": "pad", "mat": "pad", "skillet": "skillet", "pan": "skillet",
    "scale": "scale", "rack": "rack", "microphone": "microphone", "mic": "microphone", "bread": "bread",
    "roller": "roller", "bottle": "bottle", "bottles": "bottle", "dustbin": "dustbin", "plasticbox": "basket",
}


def canonical_label(word: str | None) -> str:
    if not word:
        return "object"
    w = word.lower().strip()
    return LABEL_SYNONYMS.get(w, w)


@dataclass(frozen=True)
class Candidate:
    """An object that a reference may resolve to."""

    name: str
    label: str
    color: str | None
    volume_m3: float
    position_m: tuple[float, float, float]


def candidates_of(objects: list[SceneObject]) -> list[Candidate]:
    """Scene objects as resolution candidates."""
    return [Candidate(o.id, o.label, o.color, o.size_m[0] * o.size_m[1] * o.size_m[2], o.position_m) for o in objects]


def refs_of(subtask: Subtask) -> list[ObjectRef]:
    """The subtask's distinct references: object, target, then group members."""
    refs = [subtask.obj] + ([subtask.target] if subtask.target else []) + list(subtask.group)
    out: list[ObjectRef] = []
    for r in refs:
        if r.key() not in {o.key() for o in out}:
            out.append(r)
    return out


def plan_refs(plan: Plan) -> dict[str, ObjectRef]:
    """Every distinct reference of the plan by its key, in order of first mention."""
    refs: dict[str, ObjectRef] = {}
    for s in plan.subtasks:
        for r in refs_of(s):
            refs.setdefault(r.key(), r)
    return refs


class ResolutionError(LookupError):
    """A reference matches no object, or several equally well."""


def _label_matches(ref_label: str | None, cand_label: str) -> bool:
    want = canonical_label(ref_label)
    return want == "object" or canonical_label(cand_label) == want


def resolve(ref: ObjectRef, candidates: Sequence[Candidate], exclude: Sequence[str] = (),
            allow_color_only: bool = False) -> Candidate:
    """The single candidate that ``ref`` names; raises ResolutionError with a readable message otherwise.

    ``allow_color_only`` accepts the one candidate of the right colour when none has the right label.
    """
    pool = [c for c in candidates if c.name not in exclude and _label_matches(ref.label, c.label)]
    if ref.color:
        pool = [c for c in pool if (c.color or "").lower() == ref.color.lower()]
        if not pool and allow_color_only:
            # a detector that only knows colours and generic shapes may call a pad a "block": the colour decides
            pool = [c for c in candidates if c.name not in exclude and (c.color or "").lower() == ref.color.lower()]
            pool = pool if len(pool) == 1 else []
    if ref.size and pool:
        ordered = sorted(pool, key=lambda c: c.volume_m3)
        if ref.size in ("largest", "large"):
            pool = [ordered[-1]]
        elif ref.size in ("smallest", "small"):
            pool = [ordered[0]]
        elif len(ordered) >= 3:
            pool = [ordered[len(ordered) // 2]]
    if not pool:
        seen = ", ".join(sorted(f"{c.color + ' ' if c.color else ''}{c.label}" for c in candidates)) or "nothing"
        raise ResolutionError(f"there is no {ref.phrase!r} in the scene (it contains: {seen})")
    if len(pool) > 1:
        names = ", ".join(c.name for c in pool)
        raise ResolutionError(f"{ref.phrase!r} is ambiguous: it could be any of {names}")
    return pool[0]
