"""Calibration views captured in the twin, as an operator captures them on a rig.

Each arm in turn holds a ChArUco board (``twin.board.FlangeBoard``) and is moved over CAN to reachable wrist
poses in front of the camera (position and tilt drawn from the seed; a pose out of the arm's reach is skipped and
another drawn, within a bounded number); at each pose the twin's RealSense takes a frame and, where the board is
found, the image and the flange pose the arm reports are saved as a view. The views are solved by the rig's own
code (``calibration_files.calibrate_rig``), which is what `mallvi calibrate` does with them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.contracts.errors import DriverError
from mallvi.contracts.geometry import ARM_SIDES, ArmSide, Pose
from mallvi.robot_drivers.calibration.calibration_files import (
    CalibrationView,
    CalibrationViews,
    RigCalibration,
    save_views,
    write_view_image,
)
from mallvi.robot_drivers.calibration.eye_to_hand import MIN_VIEWS, BoardSpec, CalibrationError, detect_board
from mallvi.robot_drivers.embodiment.piper_dh import EE_OFFSET_M
from mallvi.robot_drivers.piper.piper import PiperArm
from mallvi.robot_drivers.piper.piper_ik import piper_ik
from mallvi.robot_drivers.piper.piper_units import T_flange_ee
from mallvi.robot_drivers.realsense.realsense import RealSenseCamera
from mallvi.sim_bridge import layout
from mallvi.sim_bridge.world import SimWorld
from mallvi.twin.arms import TwinArms, true_arm_mounts
from mallvi.twin.board import FlangeBoard
from mallvi.twin.camera import TwinRealSenseSource

TWIN_BOARD = BoardSpec(5, 7, 0.03, 0.022)
"""The board the twin's wrists hold: 5×7 squares of 30 mm, 22 mm markers (0.15 m × 0.21 m)."""

MAX_MOVES_PER_VIEW = 4
"""Reachable poses the arm is moved to per view asked for, at most (a pose whose render hides the board costs one)."""
MAX_DRAWS_PER_VIEW = 30
"""Poses drawn per view asked for, at most; one out of the arm's reach costs only an IK check."""


class TwinCaptureError(CalibrationError):
    """Too few board views of an arm after every pose the capture may try; the message says what to do."""


@dataclass
class CaptureTally:
    """What one arm's capture tried: poses drawn, out of reach, moved to, and views with the board found."""

    drawn: int = 0
    unreachable: int = 0
    moved: int = 0
    taken: int = 0


@dataclass(frozen=True)
class CalibrationErrorVsTruth:
    """How far a calibration is from the twin's truth: camera pose and the non-anchor arm's mount."""

    camera_mm: float
    camera_deg: float
    mounts_mm: dict[ArmSide, float]


def _wrist_pose(side: ArmSide, table_z: float, rng: np.random.Generator) -> Pose:
    sign = -1.0 if side == "left" else 1.0
    x = sign * rng.uniform(0.03, 0.2)
    y = rng.uniform(-0.12, 0.02)
    z = table_z + rng.uniform(0.2, 0.34)
    base = Rotation.from_quat(np.roll(layout.top_down_quat_wxyz(math.pi / 2), -1))
    tilt = Rotation.from_euler("zxy", [rng.uniform(-25, 25), rng.uniform(-15, 15), rng.uniform(-15, 15)],
                               degrees=True)
    qx, qy, qz, qw = (tilt * base).as_quat()
    return Pose((x, y, z), (qw, qx, qy, qz))


def _reachable(arm: PiperArm, pose_world: Pose) -> bool:
    """What an operator checks by eye: the firmware will find joints for this wrist pose."""
    T_base_flange = (np.linalg.inv(arm.base_pose_world.as_matrix()) @ pose_world.as_matrix()
                     @ np.linalg.inv(T_flange_ee(EE_OFFSET_M)))
    return piper_ik(T_base_flange, arm.joint_positions_rad()) is not None


def capture_twin_views(world: SimWorld, arms: TwinArms, camera: RealSenseCamera, source: TwinRealSenseSource,
                       folder: str | Path, views_per_arm: int, board: BoardSpec = TWIN_BOARD,
                       sides: tuple[ArmSide, ...] = ARM_SIDES, seed: int = 0,
                       progress: Callable[[str], None] | None = None) -> CalibrationViews:
    """Capture up to ``views_per_arm`` board views per arm into ``folder`` (images + views.yaml).

    Poses are drawn from ``seed`` until the arm has its views, within ``MAX_DRAWS_PER_VIEW`` draws and
    ``MAX_MOVES_PER_VIEW`` moves per view asked for. Raises TwinCaptureError when an arm ends with fewer than
    the solve needs, saying how far it got and what to try.
    """
    rng = np.random.default_rng([int(seed), 7])
    views: list[CalibrationView] = []
    K = np.eye(3)
    for side in sides:
        arm = arms.arm(side)
        flange_board = FlangeBoard(world, side, board)
        source.before_render.append(flange_board.follow)
        tally = CaptureTally()
        try:
            while (tally.taken < views_per_arm and tally.drawn < views_per_arm * MAX_DRAWS_PER_VIEW
                   and tally.moved < views_per_arm * MAX_MOVES_PER_VIEW):
                tally.drawn += 1
                pose = _wrist_pose(side, world.table_top_z, rng)
                if not _reachable(arm, pose):
                    tally.unreachable += 1
                    continue
                tally.moved += 1
                try:
                    arm.move_to_pose(pose)
                except DriverError:
                    continue
                obs = camera.read()
                K = obs.K
                if detect_board(obs.rgb, board, obs.K) is None:
                    continue
                views.append(write_view_image(folder, side, len(views), obs.rgb, arm.flange_pose_base()))
                tally.taken += 1
                if progress is not None:
                    progress(f"{side} arm: view {tally.taken}/{views_per_arm}")
            arm.home()
        finally:
            source.before_render.remove(flange_board.follow)
            flange_board.remove()
        if tally.taken < MIN_VIEWS:
            raise TwinCaptureError(too_few_views(side, tally, views_per_arm, seed))
        if tally.taken < views_per_arm and progress is not None:
            progress(f"{side} arm: {tally.taken} of {views_per_arm} views after {tally.drawn} poses; solving with "
                     "those")
    w, h = source.spec.size_px
    result = CalibrationViews(board, K, np.zeros(5), w, h, views)
    save_views(folder, result)
    return result


def too_few_views(side: ArmSide, tally: CaptureTally, views_per_arm: int, seed: int) -> str:
    """Why an arm's capture ended without enough views, and what to try."""
    return (f"the {side} arm showed the board in {tally.taken} view(s); the solve needs at least {MIN_VIEWS}. Of "
            f"{tally.drawn} wrist poses drawn from --seed {seed}, {tally.unreachable} were out of the {side} arm's "
            f"reach and {tally.moved - tally.taken} of the {tally.moved} it moved to did not show the whole board. "
            f"Try another --seed (other poses), more --views (more poses are tried: up to {MAX_DRAWS_PER_VIEW} "
            f"drawn and {MAX_MOVES_PER_VIEW} moved to per view), or a scene whose objects do not hide the "
            f"{side} gripper from the camera")


def error_vs_truth(calib: RigCalibration, world: SimWorld, T_world_cam_true: NDArray[np.float64]
                   ) -> CalibrationErrorVsTruth:
    """The calibration's camera pose and mounts against the twin's truth (mm, degrees)."""
    T_err = np.linalg.inv(T_world_cam_true) @ calib.T_world_cam
    mounts = true_arm_mounts(world)
    mount_mm = {side: 1000.0 * float(np.linalg.norm(a.T_world_base[:3, 3] - np.asarray(mounts[side].position_m)))
                for side, a in calib.arms.items()}
    return CalibrationErrorVsTruth(1000.0 * float(np.linalg.norm(T_err[:3, 3])),
                                   math.degrees(float(np.linalg.norm(Rotation.from_matrix(T_err[:3, :3]).as_rotvec()))),
                                   mount_mm)
