"""``RigStation``: the real rig (two Pipers on CAN, a RealSense) as a Station.

Nothing on a rig is privileged: objects resolve through what perception saw (the world model handed in), the
grippers' contents are what the skills' own grasp check found, and there is no success oracle.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from mallvi.contracts.devices import Camera, DualArm
from mallvi.contracts.errors import DriverError
from mallvi.contracts.geometry import ARM_SIDES, ArmSide, Pose
from mallvi.contracts.skills import SkillAPI
from mallvi.contracts.station import ArmState, Box3, FunctionCamera, ReachEnvelope, StationCamera, SuccessOracle
from mallvi.contracts.world_model import WorldModel
from mallvi.robot_drivers.piper.piper_reach import piper_reach
from mallvi.robot_drivers.rig.config_rig import RigConfig
from mallvi.robot_drivers.rig.rig import make_real_rig
from mallvi.robot_drivers.rig_skills.rig_skills import RigSkills
from mallvi.robot_drivers.safety.guard import SafetyGuard

log = logging.getLogger(__name__)

RIG_CAMERA = "realsense"


class RigArmState:
    """``ArmState`` of the rig: the drivers' gripper and pose feedback, the skills' record of what is held."""

    def __init__(self, dual: DualArm, skills: RigSkills) -> None:
        self._dual = dual
        self._skills = skills

    def gripper_opening(self, arm: ArmSide) -> float:
        return self._dual.arm(arm).gripper_opening()

    def held_object(self, arm: ArmSide) -> str | None:
        return self._skills.held_object(arm)

    def ee_pose(self, arm: ArmSide) -> Pose:
        return self._dual.arm(arm).ee_pose()


def _centre_x_m(dual: DualArm) -> float:
    """x of the line between the two arms' mounts (0 when a driver does not report its mount)."""
    xs = [getattr(dual.arm(s), "base_pose_world", None) for s in ARM_SIDES]
    if not all(isinstance(p, Pose) for p in xs):
        return 0.0
    return sum(p.position_m[0] for p in xs if isinstance(p, Pose)) / 2.0


class RigStation:
    """The connected rig as a Station; ``close()`` stops and disconnects both arms and closes the camera.

    Args:
        dual: the two connected arms.
        camera: the started RealSense.
        skills: the guarded rig skills (they resolve names through ``world``).
        world: the world model the skills use, over what perception saw.
        table_top_z_m: the table height.
    """

    name = "piper rig"

    def __init__(self, dual: DualArm, camera: Camera, skills: RigSkills, world: WorldModel,
                 table_top_z_m: float) -> None:
        self.dual = dual
        self.main_camera = RIG_CAMERA
        stop = getattr(camera, "stop", None)
        start = getattr(camera, "start", None)
        self.cameras: Mapping[str, StationCamera] = {RIG_CAMERA: FunctionCamera(
            RIG_CAMERA, camera.read, on_start=start if callable(start) else None,
            on_stop=stop if callable(stop) else None, started=True)}
        self.rig_skills = skills
        self.skills: SkillAPI = skills
        self.world = world
        self.arms: ArmState = RigArmState(dual, skills)
        self.table_top_z_m = float(table_top_z_m)
        self.guard: SafetyGuard = skills.guard
        self.workspace_m: Mapping[ArmSide, Box3] = dict(self.guard.config.workspace_m)
        centre = _centre_x_m(dual)
        self.reach: Mapping[ArmSide, ReachEnvelope] = {s: piper_reach(s, centre) for s in ARM_SIDES}
        self.oracle: SuccessOracle | None = None
        self.privileged: tuple[str, ...] = ()
        self._closed = False

    @classmethod
    def connect(cls, config: RigConfig, world: WorldModel, camera_source: object | None = None) -> RigStation:
        """Connect (and, unless dry-run, enable) both Pipers, start the camera and build the guarded skills.

        Raises CalibrationFileError for a missing or malformed calibration, DeviceNotConnectedError when an arm or
        the camera does not answer (``make_real_rig``).
        """
        dual, camera, skills = make_real_rig(config, world, camera_source=camera_source)
        if not isinstance(skills, RigSkills):  # make_real_rig builds RigSkills; a different build is a bug
            raise TypeError(f"make_real_rig returned {type(skills).__name__}, not RigSkills")
        return cls(dual, camera, skills, world, config.table_top_z_m)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for arm in (self.dual.left, self.dual.right):
            try:
                arm.disconnect()
            except DriverError as e:  # disconnect the other arm and the camera even if one fails
                log.error("disconnecting the %s arm failed: %s", arm.side, e)
        for cam in self.cameras.values():
            cam.close()

    def __enter__(self) -> RigStation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
