"""Posture of perceived objects: which are tall, and which of those now lie on their side.

A tall object is one first seen at least ``TALL_RATIO`` times as tall as it is wide; it lies on its side when a
later view sees it below ``TOPPLED_HEIGHT_FRACTION`` of that first height. Objects that lie flat by design (a
roller, a bread loaf) were never tall, so they never count as toppled. An object with a handle (a mug) is not
tall; it lies on its side when perception gives its frame ("origin") tipped more than 60° from upright.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mallvi.graph.schemas import SceneObject

TALL_RATIO = 1.5
TOPPLED_HEIGHT_FRACTION = 0.6
LYING_UP_Z = 0.5  # an object whose own up axis has less than this upward part (tipped over 60°) lies on its side


def up_cos(quat_wxyz: Sequence[float]) -> float:
    """The cosine between the vertical and the z axis of a frame given by its quaternion (w, x, y, z)."""
    _, x, y, _ = (float(v) for v in quat_wxyz)
    return 1.0 - 2.0 * (x * x + y * y)


def is_tall(obj: SceneObject) -> bool:
    """Whether ``obj`` is at least ``TALL_RATIO`` times as tall as its widest horizontal side."""
    return obj.size_m[2] >= TALL_RATIO * max(obj.size_m[0], obj.size_m[1])


def first_seen(obj: SceneObject, initial: Iterable[SceneObject]) -> SceneObject | None:
    """``obj`` as the first scan saw it: the same id, else the only object of its colour and label."""
    first = list(initial)
    same_id = next((o for o in first if o.id == obj.id), None)
    if same_id is not None:
        return same_id
    same = [o for o in first if o.color is not None and o.color == obj.color and o.label == obj.label]
    return same[0] if len(same) == 1 else None


def lies_on_side(now: SceneObject, first: SceneObject | None) -> bool:
    """Whether a tall object (as first seen) is now seen below ``TOPPLED_HEIGHT_FRACTION`` of that height."""
    return first is not None and is_tall(first) and now.size_m[2] < TOPPLED_HEIGHT_FRACTION * first.size_m[2]


def tall_at_first(obj: SceneObject, initial: Iterable[SceneObject]) -> bool:
    """Whether the first scan saw ``obj`` as a tall object (to be carried upright)."""
    first = first_seen(obj, initial)
    return first is not None and is_tall(first)


def tipped_with_handle(obj: SceneObject) -> bool:
    """Whether ``obj`` has a handle and its perceived frame is tipped onto its side (``LYING_UP_Z``): a mug knocked
    over, to be stood up before it is turned by its handle or hung. False without a known frame or handle."""
    origin = obj.point("origin") or obj.point("fp0")
    if origin is None or obj.point("handle") is None:
        return False
    return up_cos(origin[3:]) < LYING_UP_Z
