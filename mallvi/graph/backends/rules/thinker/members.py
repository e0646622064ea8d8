"""Which of several alike objects a group's subtask moves.

"Put the cans into the box" becomes one subtask per can, each bound to one can when the plan was made. Alike
objects cannot be told apart by a fresh look, so the Reflector judges such a subtask by how many of them are in the
target (``_count_check``), and the ids of alike objects may pass from one to the other between looks. When the
count falls short while the subtask's own object already lies in the target (another member was knocked out, or
came to rest on the table), planning it again would only take out what is in: the subtask moves a member that is
not in instead, the one a hand holds first, else the one nearest the target. A member over the target's extent but
not in it (standing on the rim or on another member) is not taken: reaching for it there knocks it off more often
than it takes it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from mallvi.graph.goals import Box, relation_holds
from mallvi.graph.refs import canonical_label
from mallvi.graph.schemas import SceneObject, Subtask


def _alike(subtask: Subtask, o: SceneObject) -> bool:
    ref = subtask.obj
    if canonical_label(o.label) != canonical_label(ref.label):
        return False
    return not ref.color or (o.color or "").lower() == ref.color.lower()


def member_out_of_place(subtask: Subtask, obj: SceneObject, target: SceneObject | None,
                        localized: dict[str, SceneObject], table_z: float,
                        held: Callable[[SceneObject], bool] = lambda o: False) -> SceneObject | None:
    """The member of ``subtask``'s group to move instead of ``obj`` (see the module's docstring), or None when
    ``obj`` is the one to move: the subtask is not one of a group put into or onto one target, ``obj`` is not
    there, or no alike object seen lies out of it on the table or in a hand. ``held``: whether a hand holds an
    object."""
    rel = subtask.relation
    if not (subtask.obj.every and subtask.slot is not None and target is not None and rel in ("in", "on")):
        return None
    box = Box.of_scene(target)

    def there(o: SceneObject) -> bool:
        return relation_holds(rel, Box.of_scene(o), box, table_z)[0]

    def over(o: SceneObject) -> bool:
        return all(abs(o.position_m[i] - box.centre_m[i]) < box.size_m[i] / 2 for i in (0, 1))

    if not there(obj):
        return None
    out = [o for o in localized.values() if o.id not in (obj.id, target.id) and _alike(subtask, o)
           and not there(o) and (held(o) or not over(o))]
    if not out:
        return None
    tx, ty = target.position_m[0], target.position_m[1]
    return min(out, key=lambda o: (not held(o), math.dist(o.position_m[:2], (tx, ty))))
