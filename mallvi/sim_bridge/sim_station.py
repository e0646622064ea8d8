"""``SimStation``: a ``SimWorld`` as a Station (the simulated dual-arm table).

Object names resolve from simulator truth and the grippers' contents come from the simulator's grasp record:
both are privileged (a real rig perceives objects and only senses its fingers), and ``privileged`` says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mallvi.contracts.geometry import ARM_SIDES, ArmSide, Pose
from mallvi.contracts.skills import SkillAPI
from mallvi.contracts.station import (
    ArmState,
    Box3,
    FunctionCamera,
    ReachEnvelope,
    StationCamera,
    SuccessOracle,
    wrist_camera,
)
from mallvi.contracts.world_model import WorldModel
from mallvi.robot_drivers.piper.piper_reach import piper_reach
from mallvi.robot_drivers.safety.guard import SafetyGuard
from mallvi.sim_bridge import layout
from mallvi.sim_bridge.world import SimWorld

VIEW_CAMERAS = ("head", "front")
"""The fixed cameras a Station offers the agents as views; the world's wrist cameras, where it has them, are offered
as well, under ``wrist_camera(side)`` (they look where the hand is, not over the table)."""

SIM_PRIVILEGED = (
    "objects resolved from simulator truth",
    "gripper contents from the simulator's grasp record",
    "camera depth rendered exactly (no sensor noise)",
)


def sim_reach(side: ArmSide) -> ReachEnvelope:
    """The simulated Piper's reach at the simulator's arm mounts (``mallvi.robot_drivers.piper.piper_reach``)."""
    return piper_reach(side, centre_x_m=0.0)


def sim_workspace_m(table_top_z: float) -> Box3:
    """Where plan targets may lie in the simulator: above the 1.2 x 0.7 m table, up to 0.6 m over its top."""
    half_x, half_y = layout.TABLE_SIZE_M[0] / 2, layout.TABLE_SIZE_M[1] / 2
    return (-half_x, -half_y, table_top_z - 0.005), (half_x, half_y, table_top_z + 0.6)


class SimArmState:
    """``ArmState`` of a simulated world."""

    def __init__(self, world: SimWorld) -> None:
        self._world = world

    def gripper_opening(self, arm: ArmSide) -> float:
        return self._world.gripper_opening(arm)

    def held_object(self, arm: ArmSide) -> str | None:
        return self._world.grasped_object(arm)

    def ee_pose(self, arm: ArmSide) -> Pose:
        return self._world.arms[arm].ee_pose()


class SimOracle:
    """``SuccessOracle`` over a simulated world: its true object geometry and grasp record."""

    def __init__(self, world: SimWorld) -> None:
        self._world = world

    @property
    def truth(self) -> WorldModel:
        return self._world.truth

    def held_object(self, arm: ArmSide) -> str | None:
        return self._world.grasped_object(arm)

    def check(self, success_check: Callable[[Any], bool]) -> bool:
        return bool(success_check(self._world))


class SimStation:
    """A ``SimWorld`` as a Station; ``close()`` closes the world.

    Args:
        world: the simulated world (owned by the station from now on).
        main_camera: the camera the agents look through first.
        views: the further fixed cameras offered (default: the other fixed cameras the world has); the world's
            wrist cameras are offered too.
    """

    name = "sim"

    def __init__(self, world: SimWorld, main_camera: str = "head", views: Sequence[str] | None = None) -> None:
        unknown = [n for n in (main_camera, *(views or ())) if n not in world.camera_names]
        if unknown:
            raise ValueError(f"no camera {unknown}; this world has {world.camera_names}")
        self.sim = world
        self.main_camera = main_camera
        extra = VIEW_CAMERAS if views is None else tuple(views)
        names = [main_camera] + [n for n in extra if n != main_camera and n in world.camera_names]
        names += [n for n in (wrist_camera(side) for side in ARM_SIDES) if n in world.camera_names and n not in names]
        self.cameras: Mapping[str, StationCamera] = {n: self._camera(n) for n in names}
        self.skills: SkillAPI = world.skills
        self.world: WorldModel = world.truth
        self.arms: ArmState = SimArmState(world)
        self.table_top_z_m = float(world.table_top_z)
        box = sim_workspace_m(self.table_top_z_m)
        self.workspace_m: Mapping[ArmSide, Box3] = {side: box for side in ARM_SIDES}
        self.reach: Mapping[ArmSide, ReachEnvelope] = {side: sim_reach(side) for side in ARM_SIDES}
        self.guard: SafetyGuard = world.guard
        self.oracle: SuccessOracle | None = SimOracle(world)
        self.privileged: tuple[str, ...] = SIM_PRIVILEGED

    def _camera(self, name: str) -> StationCamera:
        world = self.sim
        return FunctionCamera(name, lambda: world.observe(name), started=True)  # renders on demand

    def close(self) -> None:
        for cam in self.cameras.values():
            cam.close()
        self.sim.close()

    def __enter__(self) -> SimStation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
