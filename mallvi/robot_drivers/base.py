"""Contracts shared by the simulator and the real rig: poses, arms, cameras, the skill API and the world model.

Frames and units: world frame +x to the robot's right, +y away from the robot, +z up; metres, radians.
Quaternions are [w, x, y, z] everywhere in mallvi (the benchmark's action API convention).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import TracebackType
from typing import Any, Literal, Protocol, Self, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.observation import Observation

ArmSide = Literal["left", "right"]
ARM_SIDES: tuple[ArmSide, ArmSide] = ("left", "right")


class DriverError(RuntimeError):
    """A device failed or answered with something the driver cannot use."""


class DeviceNotConnectedError(DriverError):
    """A command was sent to a device that is not connected."""


class StaleFrameError(DriverError):
    """A camera frame is missing or older than allowed."""


class UnknownObjectError(KeyError):
    """An object name that the world model does not know."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else "unknown object"


def parse_arm(value: str) -> ArmSide:
    """Validate an arm tag ("left"/"right"); raises ValueError with a clear message otherwise."""
    v = value.strip().lower()
    if v == "left":
        return "left"
    if v == "right":
        return "right"
    raise ValueError(f"arm must be 'left' or 'right', got {value!r}")


@dataclass(frozen=True)
class Pose:
    """A rigid pose in the world frame: position in metres, orientation as a unit quaternion [w, x, y, z]."""

    position_m: tuple[float, float, float]
    quat_wxyz: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)

    @staticmethod
    def from_arrays(position_m: Sequence[float] | NDArray[Any], quat_wxyz: Sequence[float] | NDArray[Any]) -> Pose:
        p = tuple(float(x) for x in position_m)
        q = np.asarray(quat_wxyz, dtype=float)
        if len(p) != 3 or q.shape != (4,):
            raise ValueError("a pose needs 3 position values and 4 quaternion values [w, x, y, z]")
        n = float(np.linalg.norm(q))
        if not np.isfinite(n) or n < 1e-9:
            raise ValueError(f"quaternion {q.tolist()} is not a valid rotation")
        qn = q / n
        return Pose((p[0], p[1], p[2]), (float(qn[0]), float(qn[1]), float(qn[2]), float(qn[3])))

    @staticmethod
    def from_matrix(T: NDArray[Any]) -> Pose:
        from scipy.spatial.transform import Rotation

        xyzw = Rotation.from_matrix(np.asarray(T)[:3, :3]).as_quat()
        return Pose.from_arrays(np.asarray(T)[:3, 3], [xyzw[3], xyzw[0], xyzw[1], xyzw[2]])

    def as_matrix(self) -> NDArray[np.float64]:
        from scipy.spatial.transform import Rotation

        w, x, y, z = self.quat_wxyz
        T = np.eye(4)
        T[:3, :3] = Rotation.from_quat([x, y, z, w]).as_matrix()
        T[:3, 3] = self.position_m
        return T

    @property
    def p(self) -> NDArray[np.float64]:
        return np.asarray(self.position_m, dtype=float)

    @property
    def q(self) -> NDArray[np.float64]:
        return np.asarray(self.quat_wxyz, dtype=float)

    def as_list(self) -> list[float]:
        return [*self.position_m, *self.quat_wxyz]


def parse_pose_list(values: Sequence[float], what: str) -> Pose | str:
    """Parse a skill's pose argument [x, y, z, qw, qx, qy, qz]; the pose, or a sentence saying why it is unusable."""
    try:
        v = [float(x) for x in values]
    except (TypeError, ValueError):
        return f"{what} must be 7 numbers [x, y, z, qw, qx, qy, qz], got {values!r}"
    if len(v) != 7:
        return f"{what} must be 7 numbers [x, y, z, qw, qx, qy, qz], got {len(v)}"
    if not all(np.isfinite(x) for x in v):
        return f"{what} contains NaN or infinite values: {v}"
    try:
        return Pose.from_arrays(v[:3], v[3:])
    except ValueError as e:
        return f"{what}: {e}"


class FailureKind(StrEnum):
    """Why a skill failed, for code to route on; the message says it for people.

    ``REFUSED_BY_GUARD`` and ``BAD_PARAMETERS`` mean nothing moved.
    """

    REFUSED_BY_GUARD = "refused_by_guard"  # the safety guard refused a target (workspace, table, speed, NaN, ...)
    UNREACHABLE = "unreachable"  # no inverse-kinematics solution for the target / outside the arm's reach
    NO_PLAN = "no_plan"  # IK exists but no collision-free path was found
    GRASP_EMPTY = "grasp_empty"  # the gripper closed on nothing
    NOT_HOLDING = "not_holding"  # a skill that needs a held object found the gripper empty
    UNKNOWN_OBJECT = "unknown_object"  # the world model does not know the object name
    BAD_PARAMETERS = "bad_parameters"  # malformed arguments (types, lengths, non-unit quaternions, ...)
    WRONG_ARM = "wrong_arm"  # the arm is not allowed to act on this object (allocation rule, held by the other)
    EXECUTION = "execution"  # the motion ran but did not reach its goal (contact, slip, object moved)
    DEVICE_FAULT = "device_fault"  # a driver, bus or camera error
    OTHER = "other"


@dataclass(frozen=True)
class SkillResult:
    """What every skill call returns. ``ok=False`` always carries a message saying why and a ``kind``."""

    ok: bool
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)
    kind: FailureKind | None = None  # set exactly when ok is False

    @staticmethod
    def success(message: str = "Action succeeded.", **data: Any) -> SkillResult:
        return SkillResult(True, message, dict(data))

    @staticmethod
    def failure(message: str, kind: FailureKind = FailureKind.OTHER, **data: Any) -> SkillResult:
        return SkillResult(False, message, dict(data), kind)

    @property
    def feedback(self) -> str:
        """The benchmark's feedback sentence for this result."""
        return "Action succeeded." if self.ok else f"Action failed: {self.message}"


@dataclass(frozen=True)
class ObjectInfo:
    """What the world model knows about one object, in the world frame.

    ``points`` are the object's named functional/contact points (e.g. "top", "bottom", "handle", "hook"),
    as world-frame poses. This is what the skills act on, from simulator truth or from perception alike; it is
    not the graph's ``SceneObject`` (what the agents reason about), which has no pose or points.
    """

    name: str
    label: str
    pose: Pose
    size_m: tuple[float, float, float]
    color: str | None = None
    points: Mapping[str, Pose] = field(default_factory=dict)


@runtime_checkable
class WorldModel(Protocol):
    """Resolves object names: simulator truth in benchmark mode, the perception scene graph on a real rig."""

    def object_names(self) -> list[str]: ...

    def get_object(self, name: str) -> ObjectInfo:
        """Raises UnknownObjectError for a name it does not know."""
        ...


class Arm(ABC):
    """One arm with a parallel gripper. Positions in metres, angles in radians, gripper opening 0 (closed)..1."""

    side: ArmSide

    @abstractmethod
    def connect(self) -> None: ...

    @abstractmethod
    def disconnect(self) -> None: ...

    @property
    @abstractmethod
    def is_connected(self) -> bool: ...

    @abstractmethod
    def joint_positions_rad(self) -> NDArray[np.float64]: ...

    @abstractmethod
    def ee_pose(self) -> Pose:
        """The end-effector pose in the world frame (0.12 m behind the grasp centre, x = approach)."""

    @abstractmethod
    def follow_joint_path(self, path_rad: NDArray[np.float64], dt_s: float) -> None:
        """Track a joint-space path (N×dof) sampled every ``dt_s`` seconds. Raises DriverError on a fault."""

    @abstractmethod
    def set_gripper(self, opening: float) -> None:
        """Command the gripper opening, 0 = closed, 1 = fully open."""

    @abstractmethod
    def gripper_opening(self) -> float: ...

    @abstractmethod
    def stop(self) -> None:
        """Stop moving now and hold position (emergency stop on real hardware)."""

    def __enter__(self) -> Self:
        self.connect()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.disconnect()


class Camera(ABC):
    """A calibrated RGB-D camera."""

    name: str

    @abstractmethod
    def read(self) -> Observation:
        """The newest frame; raises StaleFrameError if none arrives in time."""


@dataclass
class DualArm:
    """Two single-arm drivers composed; adds routing by side and a stop for both, nothing else."""

    left: Arm
    right: Arm

    def arm(self, side: ArmSide) -> Arm:
        return self.left if side == "left" else self.right

    def stop_all(self) -> None:
        errors: list[str] = []
        for a in (self.left, self.right):
            try:
                a.stop()
            except DriverError as e:  # stop the other arm even if one fails
                errors.append(f"{a.side}: {e}")
        if errors:
            raise DriverError("stop failed on " + "; ".join(errors))


class SkillAPI(Protocol):
    """The Actor's primitives (ST-BiBench Tier 2 API plus the Tier 3 16-dim action), sim and real alike."""

    def grasp_actor(
        self,
        actor: str,
        arm_tag: ArmSide,
        pre_grasp_dis: float = 0.1,
        grasp_dis: float = 0.0,
        gripper_pos: float = 0.0,
        contact_point_id: int | None = None,
    ) -> SkillResult: ...

    def place_actor(
        self,
        actor: str,
        arm_tag: ArmSide,
        target_pose: Sequence[float],
        functional_point_id: int | None = None,
        pre_dis: float = 0.1,
        dis: float = 0.02,
        is_open: bool = True,
        constrain: Literal["free", "align", "auto"] = "auto",
    ) -> SkillResult: ...

    def upright_actor(self, actor: str, arm_tag: ArmSide, pre_grasp_dis: float = 0.1) -> SkillResult:
        """Stand up an object lying on its side (mallvi's addition to the benchmark's primitives): the arm ends
        holding it upright by its upper end, ready for ``place_actor``; an upright object is simply grasped."""
        ...

    def move_by_displacement(
        self,
        arm_tag: ArmSide,
        x: float = 0.0,
        y: float = 0.0,
        z: float = 0.0,
        quat: Sequence[float] | None = None,
        move_axis: Literal["world", "arm"] = "world",
    ) -> SkillResult: ...

    def move_to_pose(self, arm_tag: ArmSide, target_pose: Sequence[float]) -> SkillResult: ...

    def close_gripper(self, arm_tag: ArmSide, pos: float = 0.0) -> SkillResult: ...

    def open_gripper(self, arm_tag: ArmSide, pos: float = 1.0) -> SkillResult: ...

    def back_to_origin(self, arm_tag: ArmSide) -> SkillResult: ...

    def get_arm_pose(self, arm_tag: ArmSide) -> SkillResult: ...

    def execute_ee_action(self, action: Sequence[float]) -> SkillResult: ...
