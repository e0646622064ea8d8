"""``mallvi calibrate``: eye-to-hand calibration of the rig's camera with a ChArUco board on each arm.

Capture on the real rig (the operator poses the arms), capture in the simulated twin (``--robot twin``), or solve
from saved views (``--from-dir``); the solve and the file it writes are the same in every case.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mallvi.cli.common import EXIT_FAILED, EXIT_OK, UsageError
from mallvi.contracts.geometry import ArmSide, parse_arm

PIPER_ANCHOR_MOUNT = "-0.30,-0.30,0.95,90"


def register(sub: Any) -> None:
    p = sub.add_parser("calibrate", help="eye-to-hand camera calibration with a ChArUco board on each arm")
    p.add_argument("--out", required=True, help="rig calibration YAML to write (loaded by `mallvi run`)")
    p.add_argument("--from-dir", help="solve from saved views (DIR/views.yaml + images) instead of capturing")
    p.add_argument("--save-views", help="capture mode: folder for the captured images and poses")
    p.add_argument("--arms", default="left,right", help="capture mode: arms to calibrate (default: left,right)")
    p.add_argument("--can-left", default="can_left", help="capture mode: CAN channel of the left arm")
    p.add_argument("--can-right", default="can_right", help="capture mode: CAN channel of the right arm")
    p.add_argument("--camera-serial", help="capture mode: RealSense serial number (default: the first found)")
    p.add_argument("--camera-recording", help="capture mode: read frames from a .db3/.bag recording instead")
    p.add_argument("--bus-type", choices=["socketcan", "virtual"], default="socketcan",
                   help="capture mode: python-can interface of the arms (virtual: rehearse with the emulator)")
    p.add_argument("--board-squares-x", type=int, default=5)
    p.add_argument("--board-squares-y", type=int, default=7)
    p.add_argument("--board-square-m", type=float, default=0.04)
    p.add_argument("--board-marker-m", type=float, default=0.03)
    p.add_argument("--anchor", choices=["left", "right"], default="left",
                   help="the arm whose mount fixes the world frame (default: left)")
    p.add_argument("--anchor-mount", default=None,
                   help="that arm's base in the world as 'x,y,z,yaw_deg' (default: -0.30,-0.30,0.95,90 on a rig; "
                        "the drawing's mount in the twin)")
    p.add_argument("--robot", choices=["piper", "twin"], default="piper",
                   help="capture mode: the real Pipers, or the simulated twin (SAPIEN arms behind the CAN bus, "
                        "a rendered board and RealSense)")
    p.add_argument("--task", default="blocks_free", help="twin: the scene whose twin to calibrate in")
    p.add_argument("--seed", type=int, default=0, help="twin: the scene's seed")
    p.add_argument("--views", type=int, default=10, help="twin: views to capture per arm (default: 10)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


@dataclass(frozen=True)
class CalibrateCommand:
    """``mallvi calibrate`` as a typed request: where the views come from and where the result goes."""

    out: Path
    anchor: ArmSide
    anchor_mount: tuple[float, float, float, float] | None
    from_dir: Path | None
    save_views: Path | None
    robot: str
    json: bool


def parse_mount(text: str) -> tuple[float, float, float, float]:
    """'x,y,z,yaw_deg' (metres, degrees) -> a tuple; UsageError otherwise."""
    try:
        x, y, z, yaw = (float(v) for v in text.split(","))
    except ValueError as e:
        raise UsageError(f"--anchor-mount must be 'x,y,z,yaw_deg' (metres, degrees), got {text!r}") from e
    return x, y, z, yaw


def command_from_args(args: argparse.Namespace) -> CalibrateCommand:
    return CalibrateCommand(
        out=Path(args.out), anchor=parse_arm(args.anchor),
        anchor_mount=parse_mount(args.anchor_mount) if args.anchor_mount else None,
        from_dir=Path(args.from_dir) if args.from_dir else None,
        save_views=Path(args.save_views) if args.save_views else None, robot=args.robot, json=args.json,
    )


def run(args: argparse.Namespace) -> int:
    cmd = command_from_args(args)
    if cmd.robot == "twin" and cmd.from_dir is None:
        return _capture_in_twin(cmd, args)
    from mallvi.contracts.errors import DriverError

    try:
        folder = cmd.from_dir if cmd.from_dir is not None else _capture_on_rig(cmd, args)
    except DriverError as e:
        print(f"mallvi calibrate: failed: {e}", file=sys.stderr)
        return EXIT_FAILED
    return _solve(cmd, folder)


def _capture_on_rig(cmd: CalibrateCommand, args: argparse.Namespace) -> Path:
    """Interactive capture on a real rig: the operator poses each arm (board on its gripper), Enter captures."""
    from mallvi.robot_drivers.calibration.capture import CaptureSettings, capture_views
    from mallvi.robot_drivers.calibration.eye_to_hand import BoardSpec

    if cmd.save_views is None:
        raise UsageError("without --from-dir, --save-views DIR is required (where the captured views go)")
    try:
        board = BoardSpec(args.board_squares_x, args.board_squares_y, args.board_square_m, args.board_marker_m)
    except ValueError as e:
        raise UsageError(f"board: {e}") from e
    try:
        sides: list[ArmSide] = [parse_arm(a) for a in args.arms.split(",")]
    except ValueError as e:
        raise UsageError(f"--arms: {e}") from e
    if args.camera_recording and not Path(args.camera_recording).is_file():
        raise UsageError(f"--camera-recording {args.camera_recording!r} does not exist")
    settings = CaptureSettings(save_dir=cmd.save_views, board=board, arms=sides,
                               can_channels={"left": args.can_left, "right": args.can_right}, bus_type=args.bus_type,
                               camera_serial=args.camera_serial, camera_recording=args.camera_recording)
    return capture_views(settings, ask=_ask, tell=lambda line: print(line, file=sys.stderr))


def _ask(prompt: str) -> str:
    return input(prompt)


def _capture_in_twin(cmd: CalibrateCommand, args: argparse.Namespace) -> int:
    """Capture views in the simulated twin of --task/--seed, then solve and write them as for a rig."""
    from mallvi.bench.task_scenes import scene_catalog
    from mallvi.sim_bridge.scenes import UnknownSceneError
    from mallvi.twin.twin_rig import capture_calibration_views, nominal_mount

    if cmd.save_views is None:
        raise UsageError("without --from-dir, --save-views DIR is required (where the captured views go)")
    if not 5 <= args.views <= 60:
        raise UsageError(f"--views must be in 5..60 per arm, got {args.views}")
    try:
        spec = scene_catalog().get(args.task).spec  # every ST-BiBench task's scene has a twin
    except UnknownSceneError as e:
        raise UsageError(str(e).strip('"')) from e
    mount = cmd.anchor_mount or nominal_mount(spec, cmd.anchor)
    print(f"mallvi calibrate: twin of {args.task} seed {args.seed}, {args.views} views per arm", file=sys.stderr)
    from mallvi.robot_drivers.calibration.eye_to_hand import CalibrationError

    try:
        capture_calibration_views(spec, args.seed, str(cmd.save_views), args.views,
                                  progress=lambda msg: print(f"  {msg}", file=sys.stderr))
    except CalibrationError as e:  # too few views of an arm: the message says what to try
        print(f"mallvi calibrate: failed: {e}", file=sys.stderr)
        return EXIT_FAILED
    return _solve(CalibrateCommand(out=cmd.out, anchor=cmd.anchor, anchor_mount=tuple(mount),  # type: ignore[arg-type]
                                   from_dir=cmd.save_views, save_views=cmd.save_views, robot="piper", json=cmd.json),
                  cmd.save_views)


def _solve(cmd: CalibrateCommand, folder: Path | str) -> int:
    from mallvi.robot_drivers.calibration.calibration_files import (
        CalibrationFileError,
        calibrate_rig,
        load_views,
        mount_matrix,
        save_rig_calibration,
    )
    from mallvi.robot_drivers.calibration.eye_to_hand import CalibrationError

    mount = mount_matrix(*(cmd.anchor_mount or parse_mount(PIPER_ANCHOR_MOUNT)))
    try:
        views = load_views(folder)
    except CalibrationFileError as e:
        raise UsageError(str(e)) from e
    try:
        calib, skipped = calibrate_rig(views, cmd.anchor, mount)
    except CalibrationFileError as e:  # an image that cannot be read
        raise UsageError(str(e)) from e
    except CalibrationError as e:
        print(f"mallvi calibrate: failed: {e}", file=sys.stderr)
        return EXIT_FAILED
    out = save_rig_calibration(cmd.out, calib)
    arms = {side: {"views": a.n_views, "skipped": skipped.get(side, []),
                   "residual_mm_mean": round(a.residual_mm_mean, 3), "residual_mm_max": round(a.residual_mm_max, 3),
                   "residual_deg_mean": round(a.residual_deg_mean, 3),
                   "reprojection_px_rms": round(a.reprojection_px_rms, 3), "dropped": list(a.dropped_views),
                   "T_world_base_xyz": [round(v, 4) for v in a.T_world_base[:3, 3].tolist()]}
            for side, a in calib.arms.items()}
    report = {"out": str(out), "anchor": calib.anchor,
              "T_world_cam": [[round(v, 5) for v in row] for row in calib.T_world_cam.tolist()], "arms": arms}
    if cmd.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"calibration written to {out}")
        print(f"camera position in the world: {[round(v, 4) for v in calib.T_world_cam[:3, 3].tolist()]} m")
        for side, a in arms.items():
            print(f"{side} arm: {a['views']} views, residual {a['residual_mm_mean']} mm mean / "
                  f"{a['residual_mm_max']} mm max, {a['residual_deg_mean']} deg mean, corners "
                  f"{a['reprojection_px_rms']} px RMS; base at {a['T_world_base_xyz']} m; skipped "
                  f"{len(skipped.get(side, []))} view(s) without the board, dropped "
                  f"{len(calib.arms[side].dropped_views)} outlier(s)")
    return EXIT_OK
