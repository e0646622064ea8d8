"""Capturing calibration views on the real rig: the operator poses each arm with the board on its gripper.

The loop asks through ``ask`` (an empty answer captures a view, ``q`` goes on to the next arm) and reports through
``tell``; the command line supplies both, so nothing here reads or writes a terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mallvi.contracts.geometry import ArmSide
from mallvi.robot_drivers.calibration.calibration_files import (
    CalibrationView,
    CalibrationViews,
    save_views,
    write_view_image,
)
from mallvi.robot_drivers.calibration.eye_to_hand import BoardSpec, detect_board

#: shows a prompt, returns the operator's answer; "q" (or end of input) ends the arm's capture
Ask = Callable[[str], str]
#: one line of progress for the operator
Tell = Callable[[str], None]


@dataclass(frozen=True)
class CaptureSettings:
    """Where the views go and which devices take them.

    Attributes:
        save_dir: folder for the captured images and ``views.yaml``.
        board: the ChArUco board on the grippers.
        arms: the arms to capture, in order.
        can_channels: each arm's CAN channel.
        bus_type: python-can interface ("socketcan" on the rig, "virtual" against the emulator).
        camera_serial: the RealSense to open (None: the first found).
        camera_recording: read frames from this recording instead of a live camera.
    """

    save_dir: Path
    board: BoardSpec
    arms: Sequence[ArmSide]
    can_channels: dict[ArmSide, str]
    bus_type: str = "socketcan"
    camera_serial: str | None = None
    camera_recording: str | None = None


def capture_views(settings: CaptureSettings, ask: Ask, tell: Tell) -> Path:
    """Capture views of each arm until the operator says ``q``; write them to ``settings.save_dir``.

    Raises DriverError when an arm or the camera does not come up.
    """
    from mallvi.robot_drivers.piper.config_piper import PiperConfig
    from mallvi.robot_drivers.piper.piper import PiperArm
    from mallvi.robot_drivers.realsense.config_realsense import RealSenseConfig
    from mallvi.robot_drivers.realsense.realsense import RealSenseCamera

    views: list[CalibrationView] = []
    camera_cfg = RealSenseConfig(serial=settings.camera_serial, recording_path=settings.camera_recording)
    with RealSenseCamera(camera_cfg, np.eye(4)) as camera:
        first = camera.read()
        for side in settings.arms:
            arm = PiperArm(PiperConfig(side=side, can_name=settings.can_channels[side], bus_type=settings.bus_type))
            with arm:
                tell(f"{side} arm: put it in teach mode, hold the board in view; Enter = capture, q = next arm")
                while _answer(ask, f"[{side} {sum(v.arm == side for v in views)} views] ") != "q":
                    obs = camera.read()
                    det = detect_board(obs.rgb, settings.board, obs.K)
                    if det is None:
                        tell("  board not found; move it into view and try again")
                        continue
                    views.append(write_view_image(settings.save_dir, side, len(views), obs.rgb,
                                                  arm.flange_pose_base()))
                    tell(f"  captured: {det.n_corners} corners, reprojection {det.reprojection_px:.2f} px")
    save_views(settings.save_dir, CalibrationViews(settings.board, first.K, np.zeros(5), first.width, first.height,
                                                   views))
    return settings.save_dir


def _answer(ask: Ask, prompt: str) -> str:
    try:
        return ask(prompt).strip().lower()
    except EOFError:
        return "q"
