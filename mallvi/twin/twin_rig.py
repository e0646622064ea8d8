"""A whole twin rig for one (scene, seed): the SAPIEN world, both Pipers over CAN, the software RealSense.

``open_twin`` is what `mallvi calibrate --robot twin` and `mallvi run --robot twin` start from. The drivers get
the mounts and the camera pose they are given (from a calibration file); the twin's truth stays inside the
world and is read only to judge success and to measure errors.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.robot_drivers.calibration.eye_to_hand import BoardSpec
from mallvi.robot_drivers.realsense.config_realsense import RealSenseConfig
from mallvi.robot_drivers.realsense.realsense import RealSenseCamera
from mallvi.sim_bridge.scene_spec import SceneSpec
from mallvi.sim_bridge.scenes import get_scene
from mallvi.sim_bridge.world import SimWorld
from mallvi.twin.arms import TwinArms, connect_twin_arms
from mallvi.twin.calibration_views import TWIN_BOARD, capture_twin_views
from mallvi.twin.camera import TwinRealSenseSource
from mallvi.twin.twin_calibration import scene_layout

TWIN_CAMERA = "realsense"


@dataclass
class TwinRig:
    """The parts of a running twin; ``close()`` releases them all."""

    world: SimWorld
    arms: TwinArms
    source: TwinRealSenseSource
    camera: RealSenseCamera
    owns_world: bool = True
    _closed: bool = field(default=False, repr=False)

    @property
    def true_T_world_cam(self) -> NDArray[np.float64]:
        """Simulator truth: where the colour imager is. For measuring calibration error only."""
        return self.source.T_world_color.copy()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.camera.stop()
        self.arms.close()
        self.source.close()
        if self.owns_world:
            self.world.close()


def open_twin(scene: str | SceneSpec, seed: int, *, mounts: Mapping[ArmSide, Pose] | None = None,
              T_world_cam: NDArray[np.float64] | None = None, enable: bool = True,
              contingency: str | None = None) -> TwinRig:
    """Build the world for (scene, seed), start the emulators, connect the drivers and the camera.

    ``mounts`` and ``T_world_cam`` are what the drivers and the camera believe (a calibration); None gives the
    nominal mounts and an identity camera pose (before calibration)."""
    world = SimWorld.create(scene, seed, cameras=(), contingency=contingency)
    try:
        return attach_twin(world, mounts=mounts, T_world_cam=T_world_cam, enable=enable, owns_world=True)
    except Exception:
        world.close()
        raise


def attach_twin(world: SimWorld, *, mounts: Mapping[ArmSide, Pose] | None = None,
                T_world_cam: NDArray[np.float64] | None = None, enable: bool = True,
                owns_world: bool = False) -> TwinRig:
    """Put the twin's drivers and camera on an existing world (``owns_world``: ``close()`` also closes it)."""
    source = TwinRealSenseSource(world)
    camera = RealSenseCamera(RealSenseConfig(name=TWIN_CAMERA), np.eye(4) if T_world_cam is None else T_world_cam,
                             source=source)
    camera.start()
    try:
        arms = connect_twin_arms(world, mounts, enable=enable)
    except Exception:
        camera.stop()
        source.close()
        raise
    return TwinRig(world, arms, source, camera, owns_world=owns_world)


def nominal_mount(scene: str | SceneSpec, side: ArmSide) -> tuple[float, float, float, float]:
    """The drawing's mount of ``side`` in the twin of ``scene``: (x, y, z, yaw_deg), as a tape measure gives it."""
    spec = scene if isinstance(scene, SceneSpec) else get_scene(scene)
    p = Pose.from_matrix(scene_layout(spec.name, spec.arm_spacing_m).mounts[side])
    x, y, z = p.position_m
    w, _, _, qz = p.quat_wxyz
    return x, y, z, math.degrees(2.0 * math.atan2(qz, w))


def capture_calibration_views(scene: str | SceneSpec, seed: int, folder: str | Path, views_per_arm: int,
                              board: BoardSpec = TWIN_BOARD, sides: tuple[ArmSide, ...] = ("left", "right"),
                              progress: Callable[[str], None] | None = None) -> Path:
    """Capture calibration views in the twin of (scene, seed) into ``folder``; returns the folder."""
    rig = open_twin(scene, seed)
    try:
        capture_twin_views(rig.world, rig.arms, rig.camera, rig.source, folder, views_per_arm, board, sides, seed,
                           progress)
    finally:
        rig.close()
    return Path(folder)
