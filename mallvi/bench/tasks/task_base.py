"""The task contract: scene, per-seed initialisation, success from simulator truth, prompt hints, limits."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from itertools import pairwise
from typing import Any, ClassVar, Protocol

import numpy as np
import sapien
from numpy.typing import NDArray

from mallvi.bench.domains import task_domain
from mallvi.bench.tasks.conditions import Condition, Evaluation, above, below
from mallvi.bench.tiers import TierName
from mallvi.contracts.geometry import ArmSide
from mallvi.contracts.observation import Observation
from mallvi.contracts.skills import SkillAPI
from mallvi.sim_bridge.domain import with_domain
from mallvi.sim_bridge.scene_spec import SceneContents, SceneSetupError, SceneSpec, SimObject
from mallvi.sim_bridge.scenes import get_scene

#: A gripper counts as open above this normalised opening and as closed below CLOSED_BELOW (benchmark values).
OPEN_ABOVE = 0.8
CLOSED_BELOW = 0.2


class BenchWorld(Protocol):
    """What tasks read from the simulated world (``SimWorld`` provides it)."""

    @property
    def objects(self) -> Mapping[str, SimObject]: ...

    @property
    def table_top_z(self) -> float: ...

    @property
    def metadata(self) -> dict[str, Any]:
        """What the scene builder recorded at set-up (``SceneContents.metadata``)."""
        ...

    @property
    def skills(self) -> SkillAPI: ...

    def gripper_opening(self, arm: ArmSide) -> float: ...

    def observe(self, camera: str = "head") -> Observation:
        """Render one camera now."""
        ...

    def grasped_object(self, arm: ArmSide) -> str | None:
        """The object ``arm`` holds (verified between its fingers), or None."""
        ...


class BenchTask(ABC):
    """One ST-BiBench task. Subclasses document Task Description / Randomizations / Success Conditions.

    Class attributes carry the benchmark's limits: ``max_turns`` planner calls, ``chunk`` actions executed
    per call, ``allocation_threshold_m`` for the arm-allocation check of ``grasp_actor`` (None = no check).
    """

    name: ClassVar[str]
    tier: ClassVar[TierName]
    instruction: ClassVar[str]
    arm_spacing_m: ClassVar[float] = 0.7
    max_turns: ClassVar[int] = 10
    chunk: ClassVar[int] = 8
    allocation_threshold_m: ClassVar[float | None] = 0.1
    #: the name of a scene in the shared registry (mallvi.sim_bridge.scenes); None = ``build_scene`` here
    shared_scene: ClassVar[str | None] = None

    def scene_spec(self, randomization: str = "original") -> SceneSpec:
        """The scene this task runs in, with the original's domain randomisation for this task
        (``bench/domains.py``: textures, light colours, distractors) or, ``randomization="none"``, without."""
        if self.shared_scene is not None:
            spec = get_scene(self.shared_scene)
        else:
            spec = SceneSpec(
                name=self.name,
                build=self.build_scene,
                arm_spacing_m=self.arm_spacing_m,
                description=self.instruction,
                tags=("st-bibench", self.tier),
            )
        return with_domain(spec, task_domain(self.name, randomization))

    def build_scene(self, scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
        """Add this task's objects (every random choice from ``rng``); raise SceneSetupError if impossible."""
        raise NotImplementedError(f"{self.name} uses the shared scene {self.shared_scene!r}")

    @abstractmethod
    def conditions(self, world: BenchWorld) -> list[Condition]:
        """Each condition of the goal, measured now from simulator truth."""

    def evaluate(self, world: BenchWorld) -> Evaluation:
        """The success check condition by condition (which held, by how much a failed one missed)."""
        return Evaluation.of(self.conditions(world))

    def check_success(self, world: BenchWorld) -> bool:
        """Whether the goal holds now, from simulator truth (every condition of ``evaluate``)."""
        return self.evaluate(world).success

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        """Facts for the planner's prompt: the task objects' positions (live; distractors are left to the
        images, as in the original's assistant info), plus task-specific targets."""
        return {"objects": {n: _round(pos(world, n)) for n in task_object_names(world)}}

    def place_refusal(self, world: BenchWorld, actor: str, target_pose: list[float]) -> str | None:
        """The original's refusal message for a ``place_actor`` to ``target_pose`` (it lets the model re-plan), or
        None; only the paper semantics ask (``bench.actions``). No task refuses unless it says so."""
        return None

    def allocation_refusal(self, world: BenchWorld, actor: str, arm: ArmSide) -> str | None:
        """The benchmark's refusal message if ``arm`` may not grasp ``actor`` (too far across), else None."""
        t = self.allocation_threshold_m
        if t is None or actor not in world.objects:
            return None
        x = float(pos(world, actor)[0])
        if (arm == "left" and x > t) or (arm == "right" and x < -t):
            return f"target {actor} is too far, {arm} arm can not finish this 'grasp' action! Please use another arm!"
        return None


def task_object_names(world: BenchWorld) -> list[str]:
    """The scene's objects without its distractors (sorted)."""
    distractors = set(world.metadata.get("clutter") or ())
    return sorted(n for n in world.objects if n not in distractors)


def pos(world: BenchWorld, name: str) -> NDArray[np.float64]:
    """An object's origin in the world frame (metres; a cube's as ``SimObject.frame_pose`` reads it)."""
    return np.asarray(world.objects[name].frame_pose().p, dtype=float)


def point(world: BenchWorld, name: str, point_name: str) -> NDArray[np.float64]:
    """A named point of an object in the world frame (metres)."""
    return np.asarray(world.objects[name].point_world(point_name).p, dtype=float)


def grippers_open(world: BenchWorld, *arms: ArmSide) -> bool:
    """True when every given arm's gripper (both if none given) is open (> 0.8)."""
    sides: tuple[ArmSide, ...] = arms or ("left", "right")
    return all(world.gripper_opening(a) > OPEN_ABOVE for a in sides)


def open_conditions(world: BenchWorld, *arms: ArmSide) -> list[Condition]:
    """One condition per given arm (both if none given): its gripper opening above 0.8 (normalised)."""
    sides: tuple[ArmSide, ...] = arms or ("left", "right")
    return [above(f"{a} gripper opening", world.gripper_opening(a), OPEN_ABOVE, unit="") for a in sides]


def row_conditions(world: BenchWorld, order: tuple[str, ...], dx_m: float, dy_m: float) -> list[Condition]:
    """Blocks in a row, left to right in ``order``: neighbours within ``dx_m``/``dy_m``, and x increasing."""
    ps = {n: pos(world, n) for n in order}
    out: list[Condition] = []
    for a, b in pairwise(order):
        pair = f"{a.split('_')[0]}-{b.split('_')[0]}"
        d = ps[b] - ps[a]
        out += [below(f"{pair} |dx|", abs(float(d[0])), dx_m), below(f"{pair} |dy|", abs(float(d[1])), dy_m),
                above(f"{pair} x order (right minus left)", float(d[0]), 0.0)]  # fmt: skip
    return out


def holds(world: BenchWorld, arm: ArmSide, name: str) -> bool:
    """``arm`` holds ``name`` now (simulator truth: the object is between its closed fingers)."""
    return world.grasped_object(arm) == name


def tilt_rad(world: BenchWorld, name: str) -> float:
    """The angle between an object's z axis and world up (radians)."""
    _w, x, y, _z = (float(v) for v in world.objects[name].pose.q)
    up_z = 1.0 - 2.0 * (x * x + y * y)  # the z component of the body z axis
    return float(np.arccos(np.clip(up_z, -1.0, 1.0)))


def upright(world: BenchWorld, name: str, max_tilt_rad: float = 0.35) -> bool:
    """Whether an object's z axis is within ``max_tilt_rad`` of world up."""
    return tilt_rad(world, name) < max_tilt_rad


def place_apart(
    rng: np.random.Generator,
    ranges: list[tuple[tuple[float, float], tuple[float, float]]],
    min_dist_m: float,
    avoid_xy: list[tuple[float, float]] | None = None,
    tries: int = 200,
) -> list[tuple[float, float]]:
    """Sample one xy per range, each at least ``min_dist_m`` from the others (and from ``avoid_xy``).

    Raises SceneSetupError when ``tries`` attempts fail (the runner then skips the seed).
    """
    placed: list[tuple[float, float]] = []
    fixed = list(avoid_xy or [])
    for (x_lo, x_hi), (y_lo, y_hi) in ranges:
        for _ in range(tries):
            x, y = float(rng.uniform(x_lo, x_hi)), float(rng.uniform(y_lo, y_hi))
            if all(np.hypot(x - px, y - py) >= min_dist_m for px, py in placed + fixed):
                placed.append((x, y))
                break
        else:
            raise SceneSetupError(f"no free spot in x {x_lo}..{x_hi}, y {y_lo}..{y_hi} after {tries} tries")
    return placed


def side_range(rng: np.random.Generator, lo: float, hi: float, side: str | None = None) -> tuple[float, float]:
    """An x range on one side of the centre line: ``(lo, hi)`` on the right, mirrored on the left.

    ``side`` None draws the side from ``rng``.
    """
    s = side if side is not None else ("left" if rng.random() < 0.5 else "right")
    return (-hi, -lo) if s == "left" else (lo, hi)


def yaw_pose(x: float, y: float, z: float, yaw_rad: float = 0.0) -> sapien.Pose:
    """A pose at (x, y, z) rotated by ``yaw_rad`` about world z."""
    return sapien.Pose(p=[x, y, z], q=[float(np.cos(yaw_rad / 2)), 0.0, 0.0, float(np.sin(yaw_rad / 2))])


def _round(v: NDArray[np.float64]) -> list[float]:
    return [round(float(c), 4) for c in v]
