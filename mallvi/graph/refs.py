"""An instruction's object references: collecting them from a plan and resolving them against a list of objects
(perceived or simulator truth).

Size words ("the largest block") rank a group. Only objects resting on something are ranked: one whose bottom is
more than ``RESTING_GAP_M`` above the lowest object's bottom (the table) and above every object beneath it is a
detection of something else (a part of an arm). When the instruction gives the group's size (``ObjectRef.among``,
"there are three blocks"), the group is that many cube-shaped objects, the ones most alike in size when there are
more (dice among blocks), whatever shape word perception gave them; when fewer than n are seen, when no such group
stands out, or when one member is less than half the size of the next (a die standing in for a block not seen),
the reference is refused rather than guessed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations, pairwise

from mallvi.graph.schemas import ObjectRef, Plan, SceneObject, Subtask

#: words that name the same kind of object
LABEL_SYNONYMS: dict[str, str] = {
    "block": "block", "cube": "block", "box": "block", "brick": "block", "blocks": "block", "cubes": "block",
    "boxes": "block", "bowl": "bowl", "bowls": "bowl", "plate": "plate", "dish": "plate", "cup": "cup",
    "mug": "cup", "can": "can", "cans": "can", "basket": "basket", "tray": "tray", "bin": "dustbin",
    "container": "basket", "ball": "ball", "sphere": "ball", "object": "object", "thing": "object",
    "item": "object", "one": "object", "pad": "pad", "mat": "pad", "skillet": "skillet", "pan": "skillet",
    "scale": "scale", "rack": "rack", "microphone": "microphone", "mic": "microphone", "bread": "bread",
    "roller": "roller", "bottle": "bottle", "bottles": "bottle", "dustbin": "dustbin", "plasticbox": "basket",
    "burger": "burger", "hamburger": "burger", "hamburg": "burger", "fries": "fries", "frenchfries": "fries",
    "toy": "toy", "hook": "rack", "cups": "cup", "mugs": "cup", "pans": "skillet",
}
#: labels perception gives objects that are only scenery (distractors on a cluttered table)
SCENERY_LABELS = frozenset({"clutter"})


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
    #: axis-aligned extent; None: unknown (then never left out of a ranking)
    size_m: tuple[float, float, float] | None = None
    #: size in the object's own frame (footprint rectangle x height), when known
    box_m: tuple[float, float, float] | None = None


def candidates_of(objects: list[SceneObject]) -> list[Candidate]:
    """Scene objects as resolution candidates; the volume from the object's own-frame size when perception knows
    it (an axis-aligned extent grows with yaw: up to twice the volume at 45 degrees)."""
    out = []
    for o in objects:
        size = o.box_m or o.size_m
        out.append(Candidate(o.id, o.label, o.color, size[0] * size[1] * size[2], o.position_m, o.size_m, o.box_m))
    return out


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

    ``allow_color_only`` accepts the one candidate of the right colour when none has the right label. A reference
    bound to a scene object (``instance``) is that object when it is among the candidates.
    """
    if ref.instance is not None:
        bound = next((c for c in candidates if c.name == ref.instance and c.name not in exclude), None)
        if bound is not None:
            return bound
    pool = [c for c in candidates if c.name not in exclude and _label_matches(ref.label, c.label)]
    if (ref.size or ref.rank) and ref.among and not ref.color:
        # a ranked group is judged by its 3D shape: a small cube seen at an angle may get another shape word
        pool += [c for c in candidates if c.name not in exclude and c not in pool and cube_shaped(c)]
    if ref.color:
        pool = [c for c in pool if (c.color or "").lower() == ref.color.lower()]
        if not pool and allow_color_only:
            # a detector that only knows colours and generic shapes may call a pad a "block": the colour decides
            pool = [c for c in candidates if c.name not in exclude and (c.color or "").lower() == ref.color.lower()]
            pool = pool if len(pool) == 1 else []
    if canonical_label(ref.label) == "object" and not ref.color and not ref.size and len(pool) > 1:
        # "the object": the one perception could not name, else the one that is not scenery (every named thing
        # is something else)
        generic = [c for c in pool if canonical_label(c.label) == "object"]
        pool = generic or [c for c in pool if canonical_label(c.label) not in SCENERY_LABELS] or pool
    if (ref.size or ref.rank) and pool and not ref.color:
        pool = ranked_group(ref, pool, candidates, by_size=True)
    if ref.rank and pool:
        if len(pool) < ref.rank:
            raise ResolutionError(f"{ref.phrase!r} cannot be told: it ranks {ref.rank} by size, but only "
                                  f"{len(pool)} are seen")
        pool = [sorted(pool, key=lambda c: -c.volume_m3)[ref.rank - 1]]
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


RESTING_GAP_M = 0.03  # a bottom this far above the table and above every object below is not resting on anything
CUBE_RATIO_MAX = 1.12  # longest over shortest side, own frame: blocks read 1.01-1.06, dice up to 1.10, cups 1.17-1.3
CUBE_FOOTPRINT_MIN = 0.83  # axis-aligned extent only: the narrower over the wider side of the footprint
CUBE_HEIGHT_RANGE = (0.6, 1.2)  # ... and height over the wider side (a cube turned 45 degrees: 0.71)
ALIKE_MARGIN = 0.15  # log size spread by which the most alike group must beat the next one
ALIKE_STEP_MAX = 2.0  # in a group of alike objects, each edge is at most this many times the next smaller one
RANK_STEP_MIN = 1.05  # objects a size word ranks differ at least this much in edge (twin dice cannot be ranked)


def _bottom(c: Candidate) -> float:
    return c.position_m[2] - (c.size_m[2] / 2 if c.size_m else 0.0)


def resting(c: Candidate, everything: Sequence[Candidate]) -> bool:
    """Whether ``c`` rests on the table (the lowest bottom among ``everything``) or on another object."""
    sized = [o for o in everything if o.size_m is not None]
    if c.size_m is None or not sized:
        return True
    bottom = _bottom(c)
    if bottom - min(_bottom(o) for o in sized) <= RESTING_GAP_M:
        return True
    for o in sized:
        if o.name == c.name or o.size_m is None:
            continue
        top = o.position_m[2] + o.size_m[2] / 2
        reach = max(o.size_m[0], o.size_m[1], c.size_m[0], c.size_m[1]) / 2
        if abs(bottom - top) <= RESTING_GAP_M and math.dist(o.position_m[:2], c.position_m[:2]) <= reach:
            return True
    return False


def cube_shaped(c: Candidate) -> bool:
    """Whether ``c``'s sides are alike: a block, a die; not a sponge, a marker, a cup or an upright figure."""
    if c.box_m is not None:
        return min(c.box_m) > 0 and max(c.box_m) / min(c.box_m) <= CUBE_RATIO_MAX
    if c.size_m is None or min(c.size_m) <= 0:
        return False
    wide = max(c.size_m[:2])
    return (min(c.size_m[:2]) / wide >= CUBE_FOOTPRINT_MIN
            and CUBE_HEIGHT_RANGE[0] <= c.size_m[2] / wide <= CUBE_HEIGHT_RANGE[1])


def _spread(group: Sequence[Candidate]) -> float:
    """How unlike in size the members are: log of the largest over the smallest edge (cube root of volume)."""
    edges = [max(c.volume_m3, 1e-12) ** (1 / 3) for c in group]
    return math.log(max(edges) / min(edges))


def _steps_alike(group: Sequence[Candidate]) -> bool:
    """Whether, sorted by size, each member's edge is within ``ALIKE_STEP_MAX`` of the next smaller one's."""
    edges = sorted(max(c.volume_m3, 1e-12) ** (1 / 3) for c in group)
    return all(b <= ALIKE_STEP_MAX * a for a, b in pairwise(edges))


def _rankable(group: Sequence[Candidate]) -> bool:
    """Whether, sorted by size, each member's edge is at least ``RANK_STEP_MIN`` times the next smaller one's."""
    edges = sorted(max(c.volume_m3, 1e-12) ** (1 / 3) for c in group)
    return all(b >= RANK_STEP_MIN * a for a, b in pairwise(edges))


def _describe(cands: Sequence[Candidate]) -> str:
    return ", ".join(f"{c.name} ({c.volume_m3 ** (1 / 3) * 100:.1f} cm)" for c in cands)


def ranked_group(ref: ObjectRef, pool: Sequence[Candidate], everything: Sequence[Candidate],
                 by_size: bool = False) -> list[Candidate]:
    """The objects a size word ranks: those of ``pool`` resting on something; with ``ref.among`` = n, the n called
    what the reference calls them when exactly n are, else the n cube-shaped ones most alike in size. With
    ``by_size`` (the instruction ranks them by size) only groups whose members differ in size are considered:
    identical dice cannot be told largest from smallest. Raises ResolutionError when the n cannot be told."""
    group = [c for c in pool if resting(c, everything)]
    n = ref.among
    if n is None:
        return group
    if len(group) < n:
        raise ResolutionError(
            f"{ref.phrase!r} cannot be told: the instruction speaks of {n} {ref.label or 'object'}s, but only "
            f"{len(group)} are seen ({_describe(group) or 'none'})")
    if len(group) == n:
        return _alike(ref, group, n, group)
    # exactly n of them are called what the instruction calls them (a scene graph that names blocks apart from
    # the dice beside them): those
    named = [c for c in group if ref.label and canonical_label(c.label) == canonical_label(ref.label)]
    if len(named) == n and not (by_size and not _rankable(named)):
        return _alike(ref, named, n, group)
    cubes = [c for c in group if cube_shaped(c)]
    if len(cubes) < n:
        raise ResolutionError(
            f"{ref.phrase!r} is ambiguous: the instruction speaks of {n} {ref.label or 'object'}s, but only "
            f"{len(cubes)} cube-shaped ones are seen ({_describe(cubes) or 'none'}) among {_describe(group)}")
    groups = list(combinations(cubes, n))
    if by_size and any(_rankable(g) for g in groups):
        groups = [g for g in groups if _rankable(g)]
    ranked = sorted(groups, key=_spread)
    best = ranked[0]
    if len(ranked) > 1 and _spread(ranked[1]) - _spread(best) < ALIKE_MARGIN:
        raise ResolutionError(
            f"{ref.phrase!r} is ambiguous: the instruction speaks of {n} {ref.label or 'object'}s and "
            f"{len(cubes)} cube-shaped ones are seen, with no {n} clearly alike: {_describe(cubes)}")
    return _alike(ref, list(best), n, cubes)


def _alike(ref: ObjectRef, group: list[Candidate], n: int, seen: Sequence[Candidate]) -> list[Candidate]:
    """``group`` when its sizes are alike; else ResolutionError (a die standing in for a block not seen)."""
    if not _steps_alike(group):
        raise ResolutionError(
            f"{ref.phrase!r} is ambiguous: the instruction speaks of {n} {ref.label or 'object'}s, but no {n} "
            f"cube-shaped ones of alike sizes are seen: {_describe(seen)}")
    return group
