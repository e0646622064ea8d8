"""The skill contract shared by the simulator and the real rig: the Actor's primitives and what they return.

Frames and units: world frame +x to the robot's right, +y away from the robot, +z up; metres, radians.
Quaternions are [w, x, y, z] everywhere in mallvi (the benchmark's action API convention).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol

import numpy as np

from mallvi.contracts.geometry import ArmSide, Pose, quat_problem


def parse_pose_list(values: object, what: str) -> Pose | Failure:
    """Parse a skill's pose argument [x, y, z, qw, qx, qy, qz]: the pose, or a ``BAD_PARAMETERS`` failure saying
    why it is unusable (``REFUSED_BY_GUARD`` for NaN/inf, as the guard refuses them). A quaternion whose norm is
    off 1 by more than ``QUAT_NORM_TOL`` is refused, not normalised: a planner that sends one has made a mistake
    the arm should not guess about."""
    bad = FailureKind.BAD_PARAMETERS
    try:
        v = [float(x) for x in values]  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        return Failure(bad, f"{what} must be 7 numbers [x, y, z, qw, qx, qy, qz], got {values!r}")
    if len(v) != 7:
        return Failure(bad, f"{what} must be 7 numbers [x, y, z, qw, qx, qy, qz], got {len(v)}")
    if not all(np.isfinite(x) for x in v):  # the safety guard's rule, applied as the pose is read
        return Failure(FailureKind.REFUSED_BY_GUARD, f"{what} contains NaN or infinite values: {v}")
    why = quat_problem(v[3:], what)
    if why is not None:
        return Failure(bad, why)
    return Pose.from_arrays(v[:3], v[3:])


class FailureKind(StrEnum):
    """Why a skill failed, for code to route on; the message says it for people.

    ``REFUSED_BY_GUARD``, ``BAD_PARAMETERS``, ``UNKNOWN_OBJECT`` and ``WRONG_ARM`` mean nothing moved.
    """

    REFUSED_BY_GUARD = "refused_by_guard"  # the safety guard refused a target (workspace, table, speed, NaN, ...)
    UNREACHABLE = "unreachable"  # no inverse-kinematics solution for the target / no grasp of the object in reach
    NO_PLAN = "no_plan"  # no collision-free path (or screw motion) to a target that may have IK
    GRASP_EMPTY = "grasp_empty"  # the gripper closed on nothing
    GRASP_OFF_TARGET = "grasp_off_target"  # the fingers closed on something else, or on the object at the wrong spot
    NOT_HOLDING = "not_holding"  # a skill that needs a held object found the gripper without it
    UNKNOWN_OBJECT = "unknown_object"  # the world model does not know the object name
    BAD_PARAMETERS = "bad_parameters"  # malformed arguments (types, lengths, non-unit quaternions, ...)
    WRONG_ARM = "wrong_arm"  # this arm may not act on the object now (allocation rule, it holds something else)
    OBJECT_STATE = "object_state"  # the object is not in a state the skill acts on (on its top, too wide, held)
    EXECUTION = "execution"  # the motion ran but the object did not follow (fell out of the hand, swung askew)
    DEVICE_FAULT = "device_fault"  # a driver, bus or camera error, or a skill that raised
    OTHER = "other"  # the default of ``SkillResult.failure`` for a skill that names no kind (mallvi's all do)


@dataclass(frozen=True)
class Failure:
    """A failed step inside a skill: a sentence for people and a kind for code (``str()`` is the sentence)."""

    kind: FailureKind
    message: str

    def __str__(self) -> str:
        return self.message

    def result(self, prefix: str = "", **data: Any) -> SkillResult:
        """The failed ``SkillResult`` of this step, its message after ``prefix``."""
        return SkillResult.failure(prefix + self.message, self.kind, **data)


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
