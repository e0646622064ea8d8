"""SimArm and SimCamera: the ``Arm`` / ``Camera`` contracts over a SAPIEN articulation and a simulated camera.

A ``SimArm`` drives its joints with PD drives (gravity is disabled on the arm links, so the drives only track);
it advances physics through the world's step function, so other arms and objects move along.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import sapien
from numpy.typing import NDArray

from mallvi.contracts.devices import Arm, Camera
from mallvi.contracts.errors import DeviceNotConnectedError, DriverError
from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.contracts.observation import Observation
from mallvi.robot_drivers.embodiment.loader import Embodiment
from mallvi.robot_drivers.safety.guard import SafetyGuard

ARM_STIFFNESS = 4000.0
ARM_DAMPING = 100.0
ARM_FORCE_LIMIT = 500.0
FINGER_STIFFNESS = 1500.0
FINGER_DAMPING = 150.0
FINGER_FORCE_LIMIT = 40.0


def _pose_of(entity: sapien.Entity) -> Pose:
    p = entity.get_pose()
    return Pose.from_arrays(p.p, p.q)


class SimArm(Arm):
    """One simulated arm. Joint positions in radians, gripper opening 0 (closed)..1 (fully open).

    ``gripper_opening()`` reports the *commanded* opening (as the benchmark does); ``finger_gap_m()`` the
    measured distance between the finger pads.
    """

    def __init__(
        self,
        side: ArmSide,
        articulation: sapien.physx.PhysxArticulation,
        embodiment: Embodiment,
        step: Callable[[int], None],
        physics_dt_s: float,
    ) -> None:
        self.side = side
        self.articulation = articulation
        self.embodiment = embodiment
        self._step = step
        self._dt = physics_dt_s
        joints = {j.name: j for j in articulation.get_active_joints()}
        names = [j.name for j in articulation.get_active_joints()]
        missing = [n for n in (*embodiment.arm_joints, *embodiment.finger_joints) if n not in joints]
        if missing:
            raise DriverError(f"the {side} arm's URDF lacks joints {missing}")
        self._arm_joints = [joints[n] for n in embodiment.arm_joints]
        self._finger_joints = [joints[n] for n in embodiment.finger_joints]
        self._arm_idx = [names.index(n) for n in embodiment.arm_joints]
        self._finger_idx = [names.index(n) for n in embodiment.finger_joints]
        links = {link.name: link for link in articulation.get_links()}
        self.ee_link = links[embodiment.ee_link]
        self.tcp_link = links[embodiment.tcp_link]
        self.finger_links = [links[n] for n in embodiment.finger_links]
        self_bit = 1 << (20 + (0 if side == "left" else 1))
        for link in articulation.get_links():
            link.disable_gravity = True
            for shape in link.collision_shapes:  # the planner keeps the arm off itself; physics ignores self-contact
                groups = list(shape.get_collision_groups())
                groups[2] |= self_bit
                shape.set_collision_groups(groups)
        for j in self._arm_joints:
            j.set_drive_properties(ARM_STIFFNESS, ARM_DAMPING, ARM_FORCE_LIMIT)
        for j in self._finger_joints:
            j.set_drive_properties(FINGER_STIFFNESS, FINGER_DAMPING, FINGER_FORCE_LIMIT)
        self._gripper_cmd = 1.0
        self._connected = True
        self.guard: SafetyGuard | None = None  # set by the world; checks every path given to follow_joint_path

    # -- lifecycle -------------------------------------------------------------------------------------------
    def connect(self) -> None:
        self._connected = True

    def disconnect(self) -> None:
        self._connected = False

    @property
    def is_connected(self) -> bool:
        return self._connected

    def _require(self) -> None:
        if not self._connected:
            raise DeviceNotConnectedError(f"the simulated {self.side} arm is disconnected")

    # -- state -----------------------------------------------------------------------------------------------
    def joint_positions_rad(self) -> NDArray[np.float64]:
        return np.asarray(self.articulation.get_qpos(), dtype=float)[self._arm_idx]

    def ee_pose(self) -> Pose:
        return _pose_of(self.ee_link.entity)

    def tcp_pose(self) -> Pose:
        """The grasp centre (0.12 m in front of the end-effector frame)."""
        return _pose_of(self.tcp_link.entity)

    def finger_gap_m(self) -> float:
        return float(np.sum(self.finger_positions_m()))

    def finger_positions_m(self) -> NDArray[np.float64]:
        """Each finger's travel from closed (metres, the embodiment's finger joints in order)."""
        return np.asarray(self.articulation.get_qpos(), dtype=float)[self._finger_idx]

    def gripper_opening(self) -> float:
        return self._gripper_cmd

    # -- commands --------------------------------------------------------------------------------------------
    def reset_joints(self, q_arm_rad: NDArray[np.float64], gripper_opening: float = 1.0) -> None:
        """Teleport the arm (episode set-up only) and hold it there."""
        q = np.asarray(self.articulation.get_qpos(), dtype=float)
        q[self._arm_idx] = q_arm_rad
        q[self._finger_idx] = gripper_opening * self.embodiment.finger_travel_m
        self.articulation.set_qpos(q)
        self.articulation.set_qvel(np.zeros_like(q))
        self.set_joint_targets(q_arm_rad)
        self.set_gripper_target(gripper_opening)

    def set_joint_targets(
        self, q_arm_rad: NDArray[np.float64], qd_arm_rad_s: NDArray[np.float64] | None = None
    ) -> None:
        """Set the PD position (and velocity) targets of the arm joints without stepping physics."""
        qd = np.zeros(len(self._arm_joints)) if qd_arm_rad_s is None else qd_arm_rad_s
        for j, q, v in zip(self._arm_joints, q_arm_rad, qd, strict=True):
            j.set_drive_target(float(q))
            j.set_drive_velocity_target(float(v))

    def set_gripper_target(self, opening: float) -> None:
        """Set the finger targets (0 closed .. 1 open) without stepping physics."""
        self._gripper_cmd = float(np.clip(opening, 0.0, 1.0))
        for j in self._finger_joints:
            j.set_drive_target(self._gripper_cmd * self.embodiment.finger_travel_m)

    def follow_joint_path(self, path_rad: NDArray[np.float64], dt_s: float) -> None:
        """Track the path: targets interpolated linearly per physics step, then a short settle.

        Raises DriverError (nothing moves) for a malformed path or one the safety guard refuses.
        """
        self._require()
        path = np.asarray(path_rad, dtype=float)
        if path.ndim != 2 or path.shape[1] != len(self._arm_joints) or not np.all(np.isfinite(path)):
            raise DriverError(f"bad joint path of shape {path.shape} for the {self.side} arm")
        if self.guard is not None:
            reason = self.guard.check_joint_path(self.side, path, dt_s)
            if reason is not None:
                raise DriverError(reason)
        dense = resample_path(path, dt_s, self._dt)
        for q, qd in zip(dense, path_velocities(dense, self._dt), strict=True):
            self.set_joint_targets(q, qd)
            self._step(1)
        self.set_joint_targets(dense[-1])
        self._step(SETTLE_STEPS)

    def set_gripper(self, opening: float) -> None:
        """Move the fingers to ``opening`` and step until they stop (or 0.6 s pass)."""
        self._require()
        self.set_gripper_target(opening)
        last = self.finger_gap_m()
        for _ in range(int(0.6 / self._dt) // 10):
            self._step(10)
            gap = self.finger_gap_m()
            if abs(gap - last) < 2e-5:
                break
            last = gap

    def stop(self) -> None:
        self.set_joint_targets(self.joint_positions_rad())


SETTLE_STEPS = 15


def resample_path(path_rad: NDArray[np.float64], path_dt_s: float, physics_dt_s: float) -> NDArray[np.float64]:
    """Linear interpolation of an N×dof path sampled every ``path_dt_s`` onto the physics time step."""
    n = len(path_rad)
    if n == 1:
        return path_rad.copy()
    t_path = np.arange(n) * path_dt_s
    t = np.arange(physics_dt_s, t_path[-1] + 1e-9, physics_dt_s)
    if len(t) == 0:
        return path_rad[-1:].copy()
    return np.stack([np.interp(t, t_path, path_rad[:, j]) for j in range(path_rad.shape[1])], axis=1)


def path_velocities(dense_rad: NDArray[np.float64], dt_s: float) -> NDArray[np.float64]:
    """Finite-difference joint velocities of a densely sampled path (the last row is zero)."""
    qd = np.zeros_like(dense_rad)
    if len(dense_rad) > 1:
        qd[:-1] = np.diff(dense_rad, axis=0) / dt_s
    return qd


class SimCamera(Camera):
    """A named camera of a simulated world; ``read()`` renders a fresh frame."""

    def __init__(self, name: str, render: Callable[[str], Observation]) -> None:
        self.name = name
        self._render = render

    def read(self) -> Observation:
        return self._render(self.name)
