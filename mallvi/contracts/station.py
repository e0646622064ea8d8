"""The Station contract: what one run needs from a robot set-up, and nothing else.

A Station is a robot set-up ready to act: its skills, its named cameras, the world model that resolves object
names, the state of its arms, each arm's workspace and reach, the safety guard, an optional success oracle and
``close()``. The simulator (``mallvi.sim_bridge.sim_station.SimStation``) and the real rig
(``mallvi.robot_drivers.rig.rig_station.RigStation``) are Stations; every run is the agent graph on a Station
(``mallvi.graph.assemble.build_context``).

A Station also lists which of its inputs are *privileged*: information a real rig could not have (e.g. object
poses read from the simulator instead of perceived). Traces and benchmark results record that list, so a figure
measured with privileged inputs says so.

Frames and units: world frame (+x to the robot's right, +y away from it, +z up), metres, radians.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, Self

from mallvi.contracts.errors import DeviceNotConnectedError, StaleFrameError
from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.contracts.guard import MotionGuard
from mallvi.contracts.observation import Observation
from mallvi.contracts.skills import SkillAPI
from mallvi.contracts.world_model import WorldModel

Vec3 = tuple[float, float, float]
Box3 = tuple[Vec3, Vec3]
"""An axis-aligned box in the world frame: ((x, y, z) low, (x, y, z) high), metres."""


class StationCamera(ABC):
    """A named camera with a lifecycle: ``start``, ``read``, ``stop``, ``close``; a context manager.

    - ``start()`` begins delivering frames; calling it on a started camera does nothing.
    - ``read()`` returns the newest frame; StaleFrameError when the camera is not started (or stopped) or no frame
      arrives in time.
    - ``stop()`` stops delivering frames and releases the stream, but keeps the camera's configuration:
      ``start()`` resumes it. A stopped camera moves nothing and costs nothing; ``read()`` fails until restarted.
    - ``close()`` stops the camera for good and releases its device; it is idempotent, and ``start()`` after it
      raises DeviceNotConnectedError.

    ``with camera:`` starts it and closes it on exit.
    """

    name: str

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def read(self) -> Observation: ...

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class FunctionCamera(StationCamera):
    """A ``StationCamera`` over a frame source: ``read_frame`` gives a frame, ``on_start``/``on_stop`` (optional)
    open and release the device. ``started=True`` wraps a device that is already streaming."""

    def __init__(self, name: str, read_frame: Callable[[], Observation], *,
                 on_start: Callable[[], None] | None = None, on_stop: Callable[[], None] | None = None,
                 started: bool = False) -> None:
        self.name = name
        self._read = read_frame
        self._on_start = on_start
        self._on_stop = on_stop
        self._started = started
        self._closed = False
        self._lock = threading.Lock()

    @property
    def is_started(self) -> bool:
        return self._started

    def start(self) -> None:
        with self._lock:
            if self._closed:
                raise DeviceNotConnectedError(f"camera {self.name!r} is closed")
            if not self._started and self._on_start is not None:
                self._on_start()
            self._started = True

    def read(self) -> Observation:
        if not self._started:
            raise StaleFrameError(f"camera {self.name!r} is not started")
        return self._read()

    def stop(self) -> None:
        with self._lock:
            if self._started and self._on_stop is not None:
                self._on_stop()
            self._started = False

    def close(self) -> None:
        if self._closed:
            return
        self.stop()
        self._closed = True


@dataclass(frozen=True)
class ReachEnvelope:
    """Where one arm's grasp centre reaches over the table, in the world frame.

    Distances across the table are measured from the centre line ``x = centre_x_m`` between the two arms,
    positive on the arm's own side (``own_side_m``), so a point 0.05 m past the line on the other arm's side
    has ``own_side_m = -0.05``.

    Attributes:
        side: the arm.
        centre_x_m: x of the line between the arms.
        y_range_m: (front, back) y of the points a standing (top-down or side) grasp reaches.
        past_centre_m: how far past the centre line such a grasp reaches.
        low_height_m: a point lower than this above the table counts as "at table height".
        low_past_centre_m: how far past the centre line the arm reaches at table height, for y up to
            ``low_max_y_m``.
        low_max_y_m: see ``low_past_centre_m``.
        leaning_y_range_m: (front, back) y an object on the table is reached with a leaned top-down grasp.
        leaning_bands: (up to y, min ``own_side_m``) bands of the leaned grasps' reach, front to back.
    """

    side: ArmSide
    centre_x_m: float
    y_range_m: tuple[float, float]
    past_centre_m: float
    low_height_m: float
    low_past_centre_m: float
    low_max_y_m: float
    leaning_y_range_m: tuple[float, float]
    leaning_bands: tuple[tuple[float, float], ...]

    def own_side_m(self, x: float) -> float:
        """How far ``x`` lies on this arm's side of the centre line (negative: on the other arm's side)."""
        return (self.centre_x_m - x) if self.side == "left" else (x - self.centre_x_m)

    def reaches(self, x: float, y: float, height_m: float = 0.0, leaning: bool = False) -> bool:
        """Whether the arm reaches (x, y) at ``height_m`` above the table; ``leaning``: with a leaned top-down
        grasp of an object on the table. An estimate: the motion planner has the final word."""
        u = self.own_side_m(x)
        if leaning and height_m < self.low_height_m:
            lo, hi = self.leaning_y_range_m
            if not lo <= y <= hi:
                return False
            for up_to_y, min_u in self.leaning_bands:
                if y <= up_to_y:
                    return u >= min_u
            return False
        lo, hi = self.y_range_m
        if not lo <= y <= hi:
            return False
        return u >= -self.past_centre_m or (
            u >= -self.low_past_centre_m and y <= self.low_max_y_m and height_m < self.low_height_m)


class ArmState(Protocol):
    """The state of the arms: gripper opening, what each gripper holds, end-effector poses."""

    def gripper_opening(self, arm: ArmSide) -> float:
        """0 closed .. 1 open."""
        ...

    def held_object(self, arm: ArmSide) -> str | None:
        """The name of the object the gripper holds, None when it holds nothing."""
        ...

    def ee_pose(self, arm: ArmSide) -> Pose:
        """The end-effector pose in the world frame."""
        ...


class SuccessOracle(Protocol):
    """Ground truth to judge a run by, independent of what the agents perceived (the simulator; a rig has none)."""

    @property
    def truth(self) -> WorldModel:
        """Every object's true geometry."""
        ...

    def held_object(self, arm: ArmSide) -> str | None:
        """The object the arm truly holds."""
        ...

    def check(self, success_check: Callable[[Any], bool]) -> bool:
        """Evaluate a task's success check (a function of the simulated world) on the current state."""
        ...


class Station(Protocol):
    """A robot set-up ready to act; see the module docstring.

    Attributes:
        name: what the set-up is ("sim", "piper rig"), for traces and reports.
        skills: the Actor's primitives; every motion passes ``guard`` before anything moves.
        cameras: named cameras; ``main_camera`` names the one the agents look through first. A camera named
            ``wrist_camera(side)`` rides on that arm's gripper: not a fixed view, it looks where the hand is.
        world: resolves the object names the skills take.
        arms: gripper openings, held objects, end-effector poses.
        table_top_z_m: the table's height in the world frame.
        workspace_m: per arm, the box every plan target of that arm must lie in.
        reach: per arm, where its grasps reach (the Thinker plans with it).
        guard: the safety guard the skills check every motion with.
        oracle: simulator truth to judge success by; None on a rig.
        privileged: the inputs a real rig would not have, in words; empty on a rig.
    """

    name: str
    skills: SkillAPI
    cameras: Mapping[str, StationCamera]
    main_camera: str
    world: WorldModel
    arms: ArmState
    table_top_z_m: float
    workspace_m: Mapping[ArmSide, Box3]
    reach: Mapping[ArmSide, ReachEnvelope]
    oracle: SuccessOracle | None
    privileged: tuple[str, ...]

    @property
    def guard(self) -> MotionGuard:
        """The safety guard the skills check every motion with (read-only)."""
        ...

    def close(self) -> None:
        """Stop the arms and cameras and release every device; idempotent."""
        ...


def wrist_camera(side: ArmSide) -> str:
    """The name of the camera on ``side``'s gripper, where a Station has one."""
    return f"{side}_wrist"


def bounding_box(boxes: Mapping[ArmSide, Box3]) -> Box3:
    """The smallest box holding every arm's workspace box."""
    los = [b[0] for b in boxes.values()]
    his = [b[1] for b in boxes.values()]
    lo = (min(p[0] for p in los), min(p[1] for p in los), min(p[2] for p in los))
    hi = (max(p[0] for p in his), max(p[1] for p in his), max(p[2] for p in his))
    return lo, hi
