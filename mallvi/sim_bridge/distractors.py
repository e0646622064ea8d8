"""Distractors on a cluttered table: placed away from prohibited areas, never failing a seed.

Follows the original benchmark's cluttered table (its ``get_cluttered_table``): up to ``max_count`` objects, each
drawn with a kind, a colour and a yaw, then up to 100 positions; a candidate that finds no free spot counts as
a failure and the sampler stops after ``max_failures`` of them, so fewer objects may be placed (the count is
recorded). A candidate stays outside every prohibited rectangle by its footprint radius plus a margin, keeps
its radius plus the other's plus two margins from every placed distractor, lies wholly on the table, and one
taller than 5 cm stands only where its whole footprint is beyond y = 0 (away from the arms).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import sapien

from mallvi.sim_bridge.objects import CLUTTER_KINDS, PALETTE, clutter_extent_m, make_clutter, yaw_quat
from mallvi.sim_bridge.scene_spec import SimObject

TALL_ABOVE_M = 0.05  # the original's z_max threshold for objects kept to the far half of the table
POSITION_TRIES = 100


@dataclass(frozen=True)
class Area:
    """An axis-aligned rectangle on the table (world frame, metres) that distractors keep out of."""

    x_min: float
    y_min: float
    x_max: float
    y_max: float

    def near(self, x: float, y: float, radius_m: float) -> bool:
        """Whether a disc of ``radius_m`` at (x, y) touches the rectangle."""
        dx = max(self.x_min - x, 0.0, x - self.x_max)
        dy = max(self.y_min - y, 0.0, y - self.y_max)
        return dx * dx + dy * dy <= radius_m * radius_m

    def as_list(self) -> list[float]:
        return [round(v, 4) for v in (self.x_min, self.y_min, self.x_max, self.y_max)]


def object_area(obj: SimObject, padding_m: float) -> Area:
    """The rectangle covering an object's box where it stands now, grown by ``padding_m`` (the original's
    ``add_prohibit_area``)."""
    c = obj.corners_world()
    return Area(float(c[:, 0].min()) - padding_m, float(c[:, 1].min()) - padding_m,
                float(c[:, 0].max()) + padding_m, float(c[:, 1].max()) + padding_m)  # fmt: skip


@dataclass(frozen=True)
class ClutterSpec:
    """How a task's table is cluttered (the original's defaults).

    ``padding_m`` grows every task object's rectangle; ``padding_by_name`` overrides it per object;
    ``work_areas`` are further rectangles kept free (targets, where the arms meet); ``clean_rate`` is the
    chance that an episode gets no distractors at all.
    """

    max_count: int = 10
    table: Area = Area(-0.59, -0.34, 0.59, 0.34)
    padding_m: float = 0.05
    padding_by_name: dict[str, float] = field(default_factory=dict)
    work_areas: tuple[Area, ...] = ()
    clean_rate: float = 0.02
    max_failures: int = 50
    margin_m: float = 0.005
    kinds: tuple[str, ...] = CLUTTER_KINDS


@dataclass
class Placed:
    """What the sampler put on the table: the objects and how many it tried for."""

    objects: dict[str, SimObject]
    clean: bool
    failures: int

    def record(self) -> dict[str, object]:
        return {
            "count": len(self.objects),
            "clean": self.clean,
            "failures": self.failures,
            "objects": {n: {"kind": o.label, "color": o.color, "xy": [round(float(v), 4) for v in o.pose.p[:2]]}
                        for n, o in self.objects.items()},
        }  # fmt: skip


def place_distractors(
    scene: sapien.Scene,
    rng: np.random.Generator,
    table_top_z: float,
    spec: ClutterSpec,
    task_objects: Iterable[SimObject],
) -> Placed:
    """Add up to ``spec.max_count`` distractors ("clutter_0", ...) to ``scene``; never raises for want of room.

    Kinds that share a label with a task object and colours that a task object carries are not drawn, so a
    task's names ("the red block", "the mug") stay unambiguous.
    """
    task = list(task_objects)
    prohibited = [object_area(o, spec.padding_by_name.get(o.name, spec.padding_m)) for o in task]
    prohibited += list(spec.work_areas)
    labels = {o.label for o in task}
    kinds = [k for k in spec.kinds if k not in labels] or list(spec.kinds)
    taken_colors = {o.color for o in task if o.color}
    colors = [c for c in PALETTE if c not in taken_colors]
    if rng.random() < spec.clean_rate:
        return Placed({}, clean=True, failures=0)
    placed: list[tuple[float, float, float]] = []  # x, y, radius
    objects: dict[str, SimObject] = {}
    failures = 0
    while len(objects) < spec.max_count and failures < spec.max_failures:
        kind = kinds[int(rng.integers(len(kinds)))]
        color = colors[int(rng.integers(len(colors)))]
        yaw = float(rng.uniform(-math.pi, math.pi))
        sx, sy, h = clutter_extent_m(kind)
        radius = 0.5 * math.hypot(sx, sy)
        xy = _free_spot(rng, spec, radius, h, prohibited, placed)
        if xy is None:
            failures += 1
            continue
        name = f"clutter_{len(objects)}"
        pose = sapien.Pose([xy[0], xy[1], table_top_z + 0.001], list(yaw_quat(yaw)))
        objects[name] = make_clutter(scene, name, pose, kind=kind, color=color)
        placed.append((xy[0], xy[1], radius))
    return Placed(objects, clean=False, failures=failures)


def _free_spot(
    rng: np.random.Generator,
    spec: ClutterSpec,
    radius_m: float,
    height_m: float,
    prohibited: Sequence[Area],
    placed: Sequence[tuple[float, float, float]],
) -> tuple[float, float] | None:
    t = spec.table
    r = radius_m + spec.margin_m
    for _ in range(POSITION_TRIES):
        x, y = float(rng.uniform(t.x_min, t.x_max)), float(rng.uniform(t.y_min, t.y_max))
        if x - r < t.x_min or x + r > t.x_max or y - r < t.y_min or y + r > t.y_max:
            continue
        if height_m > TALL_ABOVE_M and y - r < 0.0:
            continue
        if any(a.near(x, y, r) for a in prohibited):
            continue
        if all(math.hypot(x - px, y - py) > pr + r + spec.margin_m for px, py, pr in placed):
            return x, y
    return None
