"""Whether a calibration file fits the twin of a scene: its arm layout and its table.

A twin's arms stand where its scene puts them (``scene_layout``: ``arm_spacing_m`` apart, 0.6 m or 0.7 m for the
ST-BiBench tasks). A calibration made in the twin of a scene with another spacing puts both mounts centimetres
off, so every grasp goes beside its object; ``twin_calibration`` refuses it before anything is built, naming both
layouts and the command that calibrates the scene's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.geometry import ARM_SIDES, ArmSide, Pose
from mallvi.robot_drivers.calibration.calibration_files import (
    CalibrationFileError,
    RigCalibration,
    calibrated_layout,
    load_rig_calibration,
)
from mallvi.robot_drivers.calibration.plausibility import (
    ArmLayout,
    LayoutMismatchError,
    check_over_table,
    layout_mismatch,
)
from mallvi.sim_bridge import layout


def scene_layout(scene_name: str, arm_spacing_m: float) -> ArmLayout:
    """Where the twin of ``scene_name`` stands its arms (T_world_base per arm)."""
    quat = layout.arm_base_quat_wxyz()
    mounts: dict[ArmSide, NDArray[np.float64]] = {
        s: Pose(layout.arm_base_position(s, arm_spacing_m), quat).as_matrix() for s in ARM_SIDES}
    return ArmLayout(mounts, f"the twin of {scene_name}")


def calibrate_command(scene_name: str) -> str:
    """The command that calibrates the twin of ``scene_name``'s arm layout."""
    return (f"mallvi calibrate --robot twin --task {scene_name} --views 10 --save-views views_{scene_name}/ "
            f"--out calibration_{scene_name}.yaml")


def layout_refusal(calib: RigCalibration, calibration_path: str | Path, scene_name: str,
                   arm_spacing_m: float) -> str | None:
    """Why ``calib`` does not serve the twin of ``scene_name`` (None when its mounts are the scene's)."""
    return layout_mismatch(calibrated_layout(calib, f"the calibration {str(calibration_path)!r}"),
                           scene_layout(scene_name, arm_spacing_m))


def twin_calibration(calibration_path: str | Path, scene_name: str, arm_spacing_m: float,
                     table_top_z_m: float = layout.TABLE_TOP_NOMINAL_Z_M) -> RigCalibration:
    """Load ``calibration_path`` and check it serves the twin of ``scene_name``: both arms calibrated, mounts
    within the tolerance of the scene's, bases near its table.

    Raises CalibrationFileError (LayoutMismatchError for another arm layout) naming the file and what to do.
    """
    calib = load_rig_calibration(calibration_path)
    missing = [s for s in ARM_SIDES if s not in calib.arms]
    if missing:
        raise CalibrationFileError(f"{calibration_path}: arms has no mount for the {' and '.join(missing)} arm; "
                                   "run `mallvi calibrate --robot twin` with views of both arms")
    why = layout_refusal(calib, calibration_path, scene_name, arm_spacing_m)
    if why is not None:
        raise LayoutMismatchError(f"{why}. Calibrate the twin of {scene_name}: {calibrate_command(scene_name)}")
    check_over_table({s: a.T_world_base for s, a in calib.arms.items()}, table_top_z_m, str(calibration_path),
                     f"twin of {scene_name}")
    return calib
