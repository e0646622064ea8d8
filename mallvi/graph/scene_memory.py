"""Visual memory across the Descriptor's scans: stable object ids, and objects hidden under another one.

A re-scan sees the scene afresh, but the plan's bindings name objects by the ids of earlier scans. Two things
would break them: an object seen with a different shape word (a pad half covered by a block reads as
"blue_object", a block cut by the image edge as "green_pad"), and an object that is not seen at all because
something now lies on it (a pad under the block put on it). ``reconcile`` keeps the earlier id for an object of
the same kind (``_same_kind``: its colour, or its label when perception gives no colour) found within
``SAME_OBJECT_XY_M`` of where it was; and for the only lost object of its colour and label, the one new name of
both wherever it is (a fault pushed it, a knock threw it out of a container, a relay set it down elsewhere), or of
its colour alone the one within ``MOVED_BY_FAULT_MAX_M``. It keeps an earlier object that is
no longer seen when a newly seen object lies on top of where it was: the earlier observation, marked
``source = "memory: hidden under X"``; nothing is kept that no object covers (a missing detection stays missing).
Two nested objects of one size (a bowl in a bowl) read as one to depth perception: after "put X in Y" the one not
seen apart is remembered where the pair stands, ``source = "memory: nested in Y"`` (``nest_seen``).
"""

from __future__ import annotations

import math

from mallvi.graph.refs import canonical_label
from mallvi.graph.schemas import Predicate, SceneMemory, SceneObject, Subtask
from mallvi.perception.object_points import MODEL_SOURCE

SAME_OBJECT_XY_M = 0.04
MOVED_BY_FAULT_MAX_M = 0.30  # how far a push, a drop or an off-target place may have taken the lost object
COVER_MARGIN_M = 0.02
MEMORY_PREFIX = "memory: hidden under "
NESTED_PREFIX = "memory: nested in "
LOOKED_PREFIX = "memory: seen from above by "
#: a container with one of its own kind put into it stands at least this much taller than it did (a bowl in a
#: bowl rises about 1.2 cm above the lower one's rim)
NEST_RISE_MIN_M = 0.005


def is_remembered(obj: SceneObject | None) -> bool:
    """Whether ``obj`` comes from memory (hidden under another object, nested in one of its own kind, or found by
    a wrist camera looking from above, which cannot look again once the arm is home) rather than from this scan."""
    return obj is not None and obj.source.startswith((MEMORY_PREFIX, NESTED_PREFIX, LOOKED_PREFIX))


def _width(o: SceneObject) -> float:
    return max(o.size_m[0], o.size_m[1])


def _agree(x: float, y: float, tol: float) -> bool:
    return abs(x - y) <= tol * max(x, y)


def as_wide(o: SceneObject, width_m: float, tol: float = 0.25) -> bool:
    """Whether ``o``'s footprint is as wide as ``width_m`` within ``tol`` of the larger."""
    return _agree(_width(o), width_m, tol)


def alike_in_size(a: SceneObject, b: SceneObject, tol: float = 0.25) -> bool:
    """Whether two objects' footprints and heights agree within ``tol`` (of the larger): one kind, one size."""
    return as_wide(a, _width(b), tol) and _agree(a.size_m[2], b.size_m[2], tol)


def nest_seen(moved: SceneObject, container: SceneObject, fresh: list[SceneObject]) -> SceneObject | None:
    """The fresh object that is ``moved`` nested in ``container`` (alike in size: a bowl in a bowl), or None.

    Depth shows two nested objects of one size as one: the pair reads as either one, by whichever colour wins,
    under a shape word that may change. The evidence is an object about as wide as the container, standing over
    its footprint, whose top is at least ``NEST_RISE_MIN_M`` above the container's top before. The returned object
    carries ``moved``'s id, label and colour at that place, marked ``source = "memory: nested in <container>"``.
    An object from the simulator's masks (its points from the object model) is one instance: a pair never reads
    as one there, and a lone bowl tilted on its rim must not pass for the pair.
    """
    if not alike_in_size(moved, container):
        return None
    top_before = container.position_m[2] + container.size_m[2] / 2
    for o in fresh:
        if o.points_source == MODEL_SOURCE:
            continue
        if _xy_dist(o, container) > _width(container) / 4 or _width(o) < 0.75 * _width(container):
            continue
        if o.position_m[2] + o.size_m[2] / 2 >= top_before + NEST_RISE_MIN_M:
            return o.model_copy(update={"id": moved.id, "label": moved.label, "color": moved.color,
                                        "source": NESTED_PREFIX + container.id})
    return None


def _xy_dist(a: SceneObject, b: SceneObject) -> float:
    return math.hypot(a.position_m[0] - b.position_m[0], a.position_m[1] - b.position_m[1])


def _covers(top: SceneObject, below: SceneObject) -> bool:
    """``top`` lies on where ``below`` was: over its footprint, its bottom no lower than ``below``'s top."""
    reach = max(top.size_m[0], top.size_m[1], below.size_m[0], below.size_m[1]) / 2 + COVER_MARGIN_M
    top_bottom = top.position_m[2] - top.size_m[2] / 2
    below_top = below.position_m[2] + below.size_m[2] / 2
    return _xy_dist(top, below) <= reach and top_bottom >= below_top - COVER_MARGIN_M


def _alike(a: SceneObject, b: SceneObject) -> bool:
    return a.color == b.color and canonical_label(a.label) == canonical_label(b.label)


def _same_kind(a: SceneObject, b: SceneObject) -> bool:
    """Whether ``a`` may be ``b`` seen again: the same colour, and without a colour the same label (a colour
    detector's shape word changes with the angle; a detector that gives no colour names the kind itself, and a
    colourless clutter item is not a lost bottle)."""
    return a.color == b.color if a.color is not None else _alike(a, b)


def _near(xyz: tuple[float, float, float], o: SceneObject) -> bool:
    return math.hypot(xyz[0] - o.position_m[0], xyz[1] - o.position_m[1]) <= SAME_OBJECT_XY_M


def shifted_names(previous: list[SceneObject], scan: list[SceneObject],
                  known_xyz: dict[str, tuple[float, float, float]]) -> dict[int, str]:
    """Scan index -> the earlier id it is, for a scanned object that carries an alike object's earlier id while it
    stands where exactly one other alike object was last known (``known_xyz``, else the earlier scan) and that one
    is not seen under its own id there: a scan names alike objects (three bottles) in its own order, and one that
    left the view (held up out of it) shifts the others' names."""
    where = {p.id: known_xyz.get(p.id, p.position_m) for p in previous}
    ids = set(where)
    out: dict[int, str] = {}
    for i, o in enumerate(scan):
        if o.id not in ids or _near(where[o.id], o):
            continue
        others = [p for p in previous if p.id != o.id and _alike(p, o) and _near(where[p.id], o)]
        if len(others) == 1 and not any(q.id == others[0].id and _near(where[q.id], q) for q in scan):
            out[i] = others[0].id
    return out if len(set(out.values())) == len(out) else {}


def _fresh_id(base: str, taken: set[str]) -> str:
    stem = base.rsplit("_", 1)[0] if base.rsplit("_", 1)[-1].isdigit() else base
    k = 2
    while f"{stem}_{k}" in taken:
        k += 1
    return f"{stem}_{k}"


def reconcile(previous: list[SceneObject], scan: list[SceneObject], relations: list[Predicate],
              known_xyz: dict[str, tuple[float, float, float]] | None = None,
              ) -> tuple[list[SceneObject], list[Predicate]]:
    """The objects of ``scan`` under the ids of ``previous`` where they are the same object, plus the earlier
    objects hidden under a newly seen one; ``relations`` renamed to match. ``known_xyz``: where each earlier
    object was last known, when the graph knows better than the earlier scan (``shifted_names``)."""
    shifted = shifted_names(previous, scan, known_xyz or {})
    if shifted:
        taken = {o.id for o in scan} | {p.id for p in previous}
        first: dict[str, str] = {}
        moved_scan = []
        for i, o in enumerate(scan):
            new_id = shifted.get(i)
            if new_id is None and o.id in shifted.values():  # its name went to the object it belongs to
                new_id = _fresh_id(o.id, taken)
                taken.add(new_id)
            if new_id is None:
                moved_scan.append(o)
                continue
            first[o.id] = new_id
            label = next((p.label for p in previous if p.id == new_id), o.label)
            moved_scan.append(o.model_copy(update={"id": new_id, "label": label}))
        scan = moved_scan
        relations = [r.model_copy(update={"args": [first.get(a, a) for a in r.args]}) for r in relations]
    ids_now = {o.id for o in scan}
    unmatched = [o for o in previous if o.id not in ids_now]
    rename: dict[str, str] = {}
    out: list[SceneObject] = []
    for o in scan:
        if o.id in {p.id for p in previous}:
            out.append(o)
            continue
        same = [p for p in unmatched if _same_kind(o, p) and _xy_dist(p, o) <= SAME_OBJECT_XY_M]
        if len(same) == 1:
            rename[o.id] = same[0].id
            unmatched.remove(same[0])
            out.append(o.model_copy(update={"id": same[0].id, "label": same[0].label}))
        else:
            out.append(o)
    prev_ids = {p.id for p in previous}
    newcomers = [i for i, o in enumerate(out) if o.id not in prev_ids]

    def take(i: int, p: SceneObject) -> None:  # newcomer i is the lost object p
        rename[out[i].id] = p.id
        out[i] = out[i].model_copy(update={"id": p.id, "label": p.label})
        unmatched.remove(p)
        newcomers.remove(i)

    # a fault moved it further: the one newly named object of a colour is the one lost object of that colour
    for p in list(unmatched):
        cands = [i for i in newcomers if out[i].color == p.color and _xy_dist(out[i], p) <= MOVED_BY_FAULT_MAX_M]
        if p.color is not None and len(cands) == 1 and sum(q.color == p.color for q in unmatched) == 1:
            take(cands[0], p)
    # a push, a knock or the graph's own relay took it anywhere: the one lost object of a colour and label is the
    # one new object of both (nothing else brings an object into the scene)
    for p in list(unmatched):
        kin = [i for i in newcomers if _alike(out[i], p)]
        if len(kin) == 1 and sum(_alike(q, p) for q in unmatched) == 1:
            take(kin[0], p)
    for p in unmatched:
        cover = next((o for o in out if o.id != p.id and _covers(o, p)), None)
        if cover is not None:
            out.append(p.model_copy(update={"source": MEMORY_PREFIX + cover.id}))
    renamed = [r.model_copy(update={"args": [rename.get(a, a) for a in r.args]}) for r in relations]
    return out, renamed


def recover_from_view(previous: list[SceneObject], objects: list[SceneObject], seen_there: list[SceneObject],
                      view: str) -> list[SceneObject]:
    """``objects`` plus the earlier objects the main camera lost that camera ``view`` sees, under their earlier ids
    and labels and marked ``source = "<source>@<view>"``; nothing else from that view.

    A lost object is the one object of its kind (``_same_kind``) that view sees apart from those the main camera
    already has (a colour detector's shape word may differ from another angle); an ambiguous match leaves it lost.
    """
    ids_now = {o.id for o in objects}
    lost = [p for p in previous if p.id not in ids_now]
    out = list(objects)
    for p in lost:
        same = [o for o in seen_there if _same_kind(o, p)
                and not any(_same_kind(q, o) and _xy_dist(q, o) <= SAME_OBJECT_XY_M for q in out)]
        if len(same) == 1 and sum(_same_kind(q, p) for q in lost) == 1:
            out.append(same[0].model_copy(update={"id": p.id, "label": p.label, "source": f"{same[0].source}@{view}"}))
    return out


def found_from_above(wanted: list[SceneObject], seen_there: list[SceneObject], view: str) -> list[SceneObject]:
    """The objects of ``wanted`` that a wrist camera's picture shows, under their earlier ids and labels and
    marked ``source = "memory: seen from above by <view>"``: the one seen under the same id, else the only one of
    the same colour and label."""
    out = []
    for w in wanted:
        same = [o for o in seen_there if o.id == w.id] or [
            o for o in seen_there if o.color == w.color and canonical_label(o.label) == canonical_label(w.label)]
        if len(same) == 1:
            out.append(same[0].model_copy(update={"id": w.id, "label": w.label, "color": w.color or same[0].color,
                                                  "source": LOOKED_PREFIX + view}))
    return out


ALIGN_M = 0.15  # a fresh detection this close to where an object is expected is that object


def _under(a: SceneObject, b: SceneObject) -> bool:
    """Whether ``a`` lies under ``b`` (centred below it within ``SAME_OBJECT_XY_M``, its centre lower)."""
    return _xy_dist(a, b) <= SAME_OBJECT_XY_M and a.position_m[2] < b.position_m[2]


def aligned_names(fresh: list[SceneObject], before: dict[str, SceneObject], subtask: Subtask,
                  placed_at: tuple[float, float, float] | None) -> dict[int, str]:
    """Index in ``fresh`` -> the localised id it is, for the fresh objects that match one (see ``align_ids``)."""
    def kind(o: SceneObject) -> tuple[str, str | None]:
        return (canonical_label(o.label), o.color)

    moved = subtask.obj.instance
    free = list(range(len(fresh)))
    names: dict[int, str] = {}
    # the objects that stayed first, each nearest where it was; the moved one then takes what is left nearest
    # where it was put (alike bowls in a stack share a place: the one put on top may have slid off it)
    for oid, old in sorted(before.items(), key=lambda kv: kv[0] == moved):
        expected = placed_at if oid == moved and placed_at is not None else old.position_m
        same = [i for i in free if kind(fresh[i]) == kind(old)]
        if oid == moved:  # put last, it is not the one under an alike object that stayed (a bowl in a stack)
            same = [i for i in same if not any(_under(fresh[i], fresh[j]) for j in names
                                               if kind(fresh[j]) == kind(old))]
        if not same:
            continue
        best = min(same, key=lambda i: math.dist(fresh[i].position_m, expected))
        d = math.dist(fresh[best].position_m, expected)
        # the one object of its colour is that object wherever it went (a fault may throw it 40 cm), and so is the
        # moved one when where it was put is not known (end-effector actions); the one uncoloured object of a kind
        # is otherwise only within the reach of a push or a drop
        anywhere = old.color is not None or (oid == moved and placed_at is None)
        if d < ALIGN_M or (len(same) == 1 and (anywhere or d <= MOVED_BY_FAULT_MAX_M)):
            names[best] = oid
            free.remove(best)
    # a shape word may change from one view to the next (a block half hidden under another reads "object"):
    # the one free object of a colour near where an unmatched object of that colour is expected is that object
    for oid, old in before.items():
        if oid in names.values() or old.color is None:
            continue
        expected = placed_at if oid == moved and placed_at is not None else old.position_m
        tinted = [i for i in free if fresh[i].color == old.color]
        if len(tinted) == 1 and math.dist(fresh[tinted[0]].position_m, expected) < ALIGN_M:
            names[tinted[0]] = oid
            free.remove(tinted[0])
    return names


def settled_at_scan(localized: dict[str, SceneObject], scene: SceneMemory) -> dict[str, SceneObject]:
    """The localised objects where a re-scan's scene (its ids reconciled with the earlier ones) holds them; one the
    scene lacks keeps its last position."""
    out = dict(localized)
    for oid, old in localized.items():
        seen = scene.get(oid)
        if seen is not None:
            out[oid] = old.model_copy(update={"position_m": seen.position_m, "size_m": seen.size_m, "box_m": seen.box_m,
                                              "box_yaw_rad": seen.box_yaw_rad, "points": seen.points})
    return out


def settled(localized: dict[str, SceneObject], fresh: list[SceneObject], subtask: Subtask,
            placed_at: tuple[float, float, float] | None) -> dict[str, SceneObject]:
    """The localised objects where a fresh scan after an attempt sees them (matched as ``align_ids`` does); one
    not matched keeps its last position. The next subtask, or the retry, looks for them there first."""
    out = dict(localized)
    for i, oid in aligned_names(fresh, localized, subtask, placed_at).items():
        seen = fresh[i]
        out[oid] = localized[oid].model_copy(update={"position_m": seen.position_m, "size_m": seen.size_m,
                                                     "box_m": seen.box_m, "box_yaw_rad": seen.box_yaw_rad,
                                                     "points": seen.points})
    return out


def nested_after(localized: dict[str, SceneObject], fresh: list[SceneObject], subtask: Subtask,
                 placed_at: tuple[float, float, float] | None) -> SceneObject | None:
    """After a finished "put X in Y": X as the memory of it nested in Y (``nest_seen``) when the fresh scan does
    not tell X apart from Y; else None."""
    moved, container = subtask.obj.instance, subtask.target.instance if subtask.target else None
    if subtask.relation != "in" or moved not in localized or container not in localized:
        return None
    if moved in aligned_names(fresh, localized, subtask, placed_at).values():
        return None
    return nest_seen(localized[moved], localized[container], fresh)
