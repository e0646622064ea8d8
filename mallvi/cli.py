"""The `mallvi` command line. The only module of mallvi that prints, reads the terminal or exits.

Exit codes (``EXIT_CODES``): 0 success, 1 the task failed, 2 bad input (nothing was executed), 3 a device or the
model endpoint was unavailable, 130 interrupted. Each sub-command lives in a ``_cmd_<name>`` function registered
in ``_build_parser``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_UNAVAILABLE = 3
EXIT_INTERRUPTED = 130
EXIT_CODES = f"""exit codes:
  {EXIT_OK}    success
  {EXIT_FAILED}    the task was carried out and failed (a failure report says why)
  {EXIT_BAD_INPUT}    bad input: a clear message on stderr, nothing was executed
  {EXIT_UNAVAILABLE}    a device or the model endpoint was unavailable: the rig or camera did not come up,
       the render device is missing (doctor), or the model server failed or gave no
       usable answer; try again when it is back
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)"""


class UsageError(Exception):
    """Bad input from the user: reported with exit code 2, nothing executed."""


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("epilog", EXIT_CODES)
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"mallvi: error: {_safe(message)}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def _safe(text: str) -> str:
    """Text from the user, a model or a file, made safe to print: no terminal escape sequences."""
    from mallvi.graph.cli_support import terminal_safe

    return terminal_safe(text)


def _cmd_doctor(args: argparse.Namespace) -> int:
    from mallvi.config import ConfigError
    from mallvi.doctor import collect_report, endpoint_lines, endpoint_report

    endpoint = None
    if args.base_url:
        try:
            endpoint = endpoint_report(args.base_url, args.llm_model, args.llm_timeout)
        except ConfigError as e:
            raise UsageError(str(e)) from e
    report = collect_report()
    if args.json:
        print(json.dumps({**report, "endpoint": endpoint} if endpoint else report, indent=2))
    else:
        for key, value in report.items():
            if isinstance(value, dict):
                print(f"{key}:")
                for k, v in value.items():
                    print(f"  {k}: {v}")
            else:
                print(f"{key}: {value}")
        if endpoint:
            print("\n".join(endpoint_lines(endpoint)))
    if not report.get("render_device_ok") or (endpoint is not None and not endpoint.get("reachable")):
        return EXIT_UNAVAILABLE
    return EXIT_OK


def _cmd_viz(args: argparse.Namespace) -> int:
    from mallvi.logviz.app import ServeError, check_serve_args, is_loopback, serve

    try:
        catalog = check_serve_args(args.dir, args.host, args.port)
    except ServeError as e:
        raise UsageError(str(e)) from e
    runs, benches = len(catalog.keys()), len(catalog.bench_keys)
    if runs == 0 and benches == 0:
        print(f"mallvi viz: no traces under {args.dir} yet; runs will show as they appear", file=sys.stderr)
    if not is_loopback(args.host):
        print(f"mallvi viz: warning: listening on {args.host} exposes the traces to the network", file=sys.stderr)
    print(f"mallvi viz: {runs} run(s), {benches} benchmark folder(s) at http://{args.host}:{args.port}/ (Ctrl-C stops)",
          file=sys.stderr)
    serve(args.dir, host=args.host, port=args.port)
    return EXIT_OK


def _parse_mount(text: str) -> tuple[float, float, float, float]:
    try:
        x, y, z, yaw = (float(v) for v in text.split(","))
    except ValueError as e:
        raise UsageError(f"--anchor-mount must be 'x,y,z,yaw_deg' (metres, degrees), got {text!r}") from e
    return x, y, z, yaw


def _collect_calibration_views(args: argparse.Namespace) -> str:
    """Interactive capture on a real rig: the operator poses each arm (board on its gripper), Enter captures."""
    import numpy as np

    from mallvi.contracts.geometry import parse_arm
    from mallvi.robot_drivers.calibration import BoardSpec, detect_board
    from mallvi.robot_drivers.calibration_io import CalibrationView, CalibrationViews, save_views, write_view_image
    from mallvi.robot_drivers.config_piper import PiperConfig
    from mallvi.robot_drivers.piper import PiperArm
    from mallvi.robot_drivers.realsense import RealSenseCamera, RealSenseConfig

    if not args.save_views:
        raise UsageError("without --from-dir, --save-views DIR is required (where the captured views go)")
    try:
        board = BoardSpec(args.board_squares_x, args.board_squares_y, args.board_square_m, args.board_marker_m)
    except ValueError as e:
        raise UsageError(f"board: {e}") from e
    views: list[CalibrationView] = []
    try:
        sides = [parse_arm(a) for a in args.arms.split(",")]
    except ValueError as e:
        raise UsageError(f"--arms: {e}") from e
    if args.camera_recording and not Path(args.camera_recording).is_file():
        raise UsageError(f"--camera-recording {args.camera_recording!r} does not exist")

    def next_key(side: str) -> str:
        try:
            return input(f"[{side} {sum(v.arm == side for v in views)} views] ").strip().lower()
        except EOFError:
            return "q"

    camera_cfg = RealSenseConfig(serial=args.camera_serial, recording_path=args.camera_recording)
    with RealSenseCamera(camera_cfg, np.eye(4)) as camera:
        first = camera.read()
        for side in sides:
            arm = PiperArm(PiperConfig(side=side, can_name=getattr(args, f"can_{side}"), bus_type=args.bus_type))
            with arm:
                print(f"{side} arm: put it in teach mode, hold the board in view; Enter = capture, q = next arm",
                      file=sys.stderr)
                while next_key(side) != "q":
                    obs = camera.read()
                    det = detect_board(obs.rgb, board, obs.K)
                    if det is None:
                        print("  board not found; move it into view and try again", file=sys.stderr)
                        continue
                    views.append(write_view_image(args.save_views, side, len(views), obs.rgb,
                                                  arm.flange_pose_base()))
                    print(f"  captured: {det.n_corners} corners, reprojection {det.reprojection_px:.2f} px",
                          file=sys.stderr)
    save_views(args.save_views, CalibrationViews(board, first.K, np.zeros(5), first.width, first.height, views))
    return str(args.save_views)


PIPER_ANCHOR_MOUNT = "-0.30,-0.30,0.95,90"


def _cmd_calibrate_twin(args: argparse.Namespace) -> int:
    """Capture views in the simulated twin of --task/--seed, then solve and write them as for a rig."""
    from mallvi.bench.catalog import scene_catalog
    from mallvi.sim_bridge.scenes import UnknownSceneError
    from mallvi.sim_bridge.twin_rig import capture_calibration_views, nominal_mount

    if not args.save_views:
        raise UsageError("without --from-dir, --save-views DIR is required (where the captured views go)")
    if not 5 <= args.views <= 60:
        raise UsageError(f"--views must be in 5..60 per arm, got {args.views}")
    try:
        spec = scene_catalog().get(args.task).spec  # every ST-BiBench task's scene has a twin
    except UnknownSceneError as e:
        raise UsageError(str(e).strip('"')) from e
    if args.anchor_mount is None:
        args.anchor_mount = ",".join(f"{v:.6f}" for v in nominal_mount(spec, args.anchor))
    _parse_mount(args.anchor_mount)
    print(f"mallvi calibrate: twin of {args.task} seed {args.seed}, {args.views} views per arm", file=sys.stderr)
    capture_calibration_views(spec, args.seed, args.save_views, args.views,
                              progress=lambda msg: print(f"  {msg}", file=sys.stderr))
    args.from_dir = args.save_views
    args.robot = "piper"
    return _cmd_calibrate(args)


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from mallvi.contracts.errors import DriverError
    from mallvi.robot_drivers.calibration import CalibrationError
    from mallvi.robot_drivers.calibration_io import (
        CalibrationFileError,
        calibrate_rig,
        load_views,
        mount_matrix,
        save_rig_calibration,
    )

    if args.robot == "twin" and not args.from_dir:
        return _cmd_calibrate_twin(args)
    mount = mount_matrix(*_parse_mount(args.anchor_mount or PIPER_ANCHOR_MOUNT))
    try:
        folder = args.from_dir if args.from_dir else _collect_calibration_views(args)
    except DriverError as e:
        print(f"mallvi calibrate: failed: {e}", file=sys.stderr)
        return EXIT_FAILED
    try:
        views = load_views(folder)
    except CalibrationFileError as e:
        raise UsageError(str(e)) from e
    try:
        calib, skipped = calibrate_rig(views, args.anchor, mount)
    except CalibrationError as e:
        print(f"mallvi calibrate: failed: {e}", file=sys.stderr)
        return EXIT_FAILED
    out = save_rig_calibration(args.out, calib)
    arms = {side: {"views": a.n_views, "skipped": skipped.get(side, []),
                   "residual_mm_mean": round(a.residual_mm_mean, 3), "residual_mm_max": round(a.residual_mm_max, 3),
                   "residual_deg_mean": round(a.residual_deg_mean, 3),
                   "reprojection_px_rms": round(a.reprojection_px_rms, 3), "dropped": list(a.dropped_views),
                   "T_world_base_xyz": [round(v, 4) for v in a.T_world_base[:3, 3].tolist()]}
            for side, a in calib.arms.items()}
    report = {"out": str(out), "anchor": calib.anchor,
              "T_world_cam": [[round(v, 5) for v in row] for row in calib.T_world_cam.tolist()], "arms": arms}
    if args.json:
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


def _ask_approval(payload: dict[str, object]) -> object:
    """Human approval before the Actor: approve, edit (a JSON action plan), abort, or pause (resume later)."""
    print(f"\nsubtask: {payload.get('subtask')}", file=sys.stderr)
    calls = payload.get("calls")
    for call in calls if isinstance(calls, list) else []:
        print(f"  {json.dumps(call)}", file=sys.stderr)
    while True:
        print("[a]pprove, [e]dit, a[b]ort, [p]ause? ", end="", file=sys.stderr, flush=True)
        line = sys.stdin.readline()
        answer = line.strip().lower()
        if not line or answer in ("p", "pause"):
            return None
        if answer in ("a", "approve", "y", "yes"):
            return "approve"
        if answer in ("b", "abort", "x", "n", "no"):
            return "abort"
        if answer in ("e", "edit"):
            print('paste the edited plan as one JSON line ({"calls": [...]}):', file=sys.stderr)
            try:
                return {"action": "edit", "plan": json.loads(sys.stdin.readline())}
            except json.JSONDecodeError as e:
                print(f"not JSON: {e}", file=sys.stderr)


@contextlib.contextmanager
def _native_stdout_to_stderr() -> Iterator[None]:
    """Point file descriptor 1 at stderr for the duration (C/C++ code printing to stdout), then restore it."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no real stdout (e.g. captured by a test runner)
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _run_and_report(instruction: str | None, task: str, seed: int, args: argparse.Namespace) -> int:
    from mallvi.config import ConfigError
    from mallvi.contracts.errors import DriverError
    from mallvi.graph.backends.base import RefusalError
    from mallvi.graph.cli_support import (
        check_checkpoint,
        check_seed,
        config_from_args,
        default_trace_dir,
        llm_notice,
        precheck,
        summary_lines,
    )
    from mallvi.graph.sim_run import run_in_sim
    from mallvi.tracing.trace import claim_run_dir, release_run_dir

    try:
        check_seed(seed)
        cfg = config_from_args(args)
        precheck(instruction, cfg)
    except (ConfigError, ValueError) as e:
        raise UsageError(str(e)) from e
    if cfg.uses_llm and not args.quiet:
        print(f"[mallvi] {_safe(llm_notice(cfg))}", file=sys.stderr)
    trace_root = Path(args.trace_dir) if args.trace_dir else default_trace_dir(task, seed)
    checkpoint = args.checkpoint or (f"{trace_root}/checkpoints.sqlite" if args.approve or args.resume else None)
    try:
        if checkpoint is not None:
            check_checkpoint(checkpoint, args.resume)
        trace_dir = claim_run_dir(trace_root)  # a reused folder: this run gets its own run-N/ in it
    except ValueError as e:
        raise UsageError(str(e)) from e
    except OSError as e:
        raise UsageError(f"cannot write the trace to {trace_root}: {e.strerror or e}") from e
    progress = None if args.quiet else (lambda line: print(f"[mallvi] {_safe(line)}", file=sys.stderr))
    try:
        with _native_stdout_to_stderr():  # native libraries (the motion planner) print; stdout stays clean
            if cfg.robot == "piper" and cfg.camera == "realsense":
                from mallvi.graph.rig_run import run_on_rig

                if instruction is None:
                    raise UsageError("the real rig needs an instruction")
                result = run_on_rig(instruction, cfg, args.calibration, trace_dir=trace_dir, progress=progress,
                                    decide=_ask_approval if args.approve else None)
            else:
                from mallvi.bench.catalog import scene_catalog

                result = run_in_sim(instruction, task, seed, cfg, trace_dir=trace_dir, progress=progress,
                                    decide=_ask_approval if args.approve else None, checkpoint_path=checkpoint,
                                    resume_thread=args.resume, catalog=scene_catalog(),
                                    twin_calibration=args.calibration if cfg.robot == "twin" else None)
    except (ConfigError, RefusalError, UsageError) as e:
        release_run_dir(trace_dir)
        raise UsageError(str(e)) from e
    except DriverError as e:
        release_run_dir(trace_dir)
        print(f"mallvi: error: the rig did not come up: {_safe(str(e))}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    if args.json:
        print(result.model_dump_json(exclude={"goal_check"}))
    else:
        print("\n".join(_safe(line) for line in summary_lines(result)))
    if result.status == "refused":
        print(f"mallvi: error: refused: {_safe(str(result.refusal))}", file=sys.stderr)
        if result.refusal_cause == "model":  # the endpoint, not the instruction: not bad input
            return EXIT_UNAVAILABLE
    return result.exit_code


def _cmd_run(args: argparse.Namespace) -> int:
    if args.instruction is not None:  # pasted text may carry colour codes: they are no part of an instruction
        args.instruction = _safe(args.instruction)
    instruction = args.instruction if args.instruction and args.instruction.strip() else None
    if args.instruction is not None and instruction is None:
        raise UsageError("the instruction is empty")
    if args.task is None and args.robot in ("sim", "twin"):
        raise UsageError(f"--task is required with --robot {args.robot} (the scene to run in)")
    return _run_and_report(instruction, args.task or "real_rig", args.seed, args)


def _cmd_demo(args: argparse.Namespace) -> int:
    from mallvi.graph.cli_support import DEMO_INSTRUCTION, DEMO_TASK

    return _run_and_report(DEMO_INSTRUCTION, DEMO_TASK, args.seed, args)


def _add_run_options(p: argparse.ArgumentParser, demo: bool = False) -> None:
    if not demo:
        p.add_argument("instruction", nargs="?", default=None,
                       help="what to do; omitted: the scene's own instruction and success check")
        p.add_argument("--task", help="the scene to run in (e.g. stack_blocks_three); required in the simulator")
    p.add_argument("--seed", type=int, default=0, help="scene seed, 0 .. 2^32-1 (default: 0)")
    p.add_argument("--backend", choices=["rules", "llm"], default="rules", help="backend of every agent")
    p.add_argument("--agent-backend", action="append", metavar="AGENT=BACKEND",
                   help="override one agent's backend, e.g. reflector=llm (repeatable)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $MALLVI_BASE_URL); key: $OPENAI_API_KEY")
    p.add_argument("--llm-model", help="text model for the llm backend")
    p.add_argument("--vlm-model", help="vision model (Descriptor, Reflector) for the llm backend")
    p.add_argument("--llm-timeout", type=float, default=60.0,
                   help="seconds per model request (default: 60); one question, retries and re-asks included, "
                        "takes at most 3 times this")
    p.add_argument("--llm-decoding", default="auto", metavar="MODE",
                   help="how to get JSON from the model: auto (default: probe the endpoint for schema-constrained "
                        "decoding), json_schema, json_object_schema, structured_outputs, guided_json or prompt")
    p.add_argument("--perception", choices=["sim", "color", "neural"], default="color",
                   help="color (default), sim (privileged masks: isolates planning) or neural")
    p.add_argument("--robot", choices=["sim", "piper", "twin"], default="sim",
                   help="sim; piper (the real rig); twin (the rig's drivers, camera and skills on a simulated twin "
                        "of --task, needs --calibration from `mallvi calibrate --robot twin`)")
    p.add_argument("--camera", choices=["sim", "realsense"], default="sim")
    p.add_argument("--calibration", default=os.environ.get("MALLVI_RIG_CALIBRATION", "rig_calibration.yaml"),
                   help="real rig: calibration YAML from `mallvi calibrate` (default: $MALLVI_RIG_CALIBRATION or "
                        "rig_calibration.yaml)")
    p.add_argument("--no-reflector", action="store_true", help="ablation: no verification, no retries")
    p.add_argument("--single-agent", action="store_true", help="ablation: one planner call per step")
    p.add_argument("--approve", action="store_true", help="ask before every Actor step (approve/edit/abort/pause)")
    p.add_argument("--resume", metavar="THREAD_ID", help="continue a paused run from its checkpoint")
    p.add_argument("--checkpoint", help="SQLite checkpoint file (default: TRACE_DIR/checkpoints.sqlite)")
    p.add_argument("--dry-run", action="store_true", help="plan and think, stop before the first motion")
    p.add_argument("--contingency", help="fault injection level (none|easy|medium|hard|custom)")
    p.add_argument("--trace-dir", help="where the trace goes (default: runs/<time>-<task>-<seed>); a folder that "
                                       "already holds a run gets this one in a new run-N/ subfolder")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def _bench_progress_printer(quiet: bool) -> object:
    """A callback drawing ``[bench] done/total bar success%`` on stderr (one line per episode if not a TTY)."""
    from mallvi.bench.runner import Progress

    tty = sys.stderr.isatty()

    def show(p: Progress) -> None:
        done, total, wins, last = p.done, p.total, p.successes, p.last
        width = 24
        filled = int(width * done / total) if total else width
        rate = 100.0 * wins / done if done else 0.0
        status = "skipped" if last.get("status") == "skipped" else ("ok" if last.get("success") else "fail")
        if last.get("status") == "error":
            status = "error"
        line = (f"[bench] {done}/{total} [{'#' * filled}{'-' * (width - filled)}] success {rate:.0f}% "
                f"({wins}/{done})  {last['task']} seed {last['seed']}: {status}")  # fmt: skip
        if tty:
            print("\r" + line.ljust(110), end="" if done < total else "\n", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)

    return None if quiet else show


def _cmd_bench(args: argparse.Namespace) -> int:
    import os

    from mallvi.bench.config import BenchConfig
    from mallvi.bench.runner import RunDirError, run_bench
    from mallvi.bench.tiers import parse_tier, select_tasks
    from mallvi.config import check_base_url

    try:
        tier = parse_tier(args.tier)
        tasks = tuple(select_tasks(tier, args.tasks))
        llm = {k: v for k, v in {"base_url": args.base_url or os.environ.get("MALLVI_BASE_URL"),
                                 "model": args.llm_model, "vlm_model": args.vlm_model,
                                 "example_images": args.example_images}.items() if v}  # fmt: skip
        if "base_url" in llm and (args.backend == "llm" or args.agent == "single"):
            check_base_url(llm["base_url"])
        cfg = BenchConfig(tier=tier, tasks=tasks, episodes=args.episodes, seed_start=args.seed_start,
                          agent=args.agent, backend=args.backend, perception=args.perception,
                          contingency=args.contingency, llm=llm, save_images=not args.no_images,
                          single_mode=args.single_mode, reuse=not args.no_reuse,
                          station=args.station, calibration=args.calibration,
                          randomization=args.randomization)  # fmt: skip
        if args.workers is not None and args.workers < 1:
            raise ValueError(f"--workers must be at least 1, got {args.workers}")
        with _native_stdout_to_stderr():  # the motion planner's C++ code writes notices to fd 1
            results = run_bench(cfg, args.out, workers=args.workers, ray_address=args.ray_address,
                                on_progress=_bench_progress_printer(args.quiet))  # type: ignore[arg-type]
    except (ValueError, RunDirError) as e:
        raise UsageError(str(e)) from e
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        with open(f"{args.out}/table.md", encoding="utf-8") as fh:
            print(fh.read(), end="")
        if results.get("cost"):
            from mallvi.bench.cost import format_totals

            print("\n" + format_totals(results["cost"]) + f"; {results['run'].get('episodes_per_minute') or 0:.1f} "
                  f"episodes per minute with {results['run'].get('workers')} worker(s)")  # fmt: skip
        print(f"\nresults: {args.out}/results.json  episodes: {args.out}/episodes.jsonl  traces: {args.out}/traces/")
    errors = sum(t["errors"] for t in results["tasks"].values())
    if errors:
        print(f"mallvi: {errors} episode(s) ended with an exception; see episodes.jsonl", file=sys.stderr)
    return EXIT_FAILED if errors else EXIT_OK


def _cmd_perceive(args: argparse.Namespace) -> int:
    from mallvi.graph.cli_support import check_seed
    from mallvi.perception.report import draw, perceive_frame
    from mallvi.sim_bridge.snapshot import truth_frame

    try:
        check_seed(args.seed)
    except ValueError as e:
        raise UsageError(str(e)) from e
    if args.image and (not Path(args.image).parent.is_dir() or not args.image.lower().endswith(".png")):
        raise UsageError(f"--image must be a .png path in an existing folder, got {args.image!r}")
    try:
        result = perceive_frame(args.task, args.seed, args.perception,
                                lambda: truth_frame(args.task, args.seed, args.camera))
    except (KeyError, ValueError) as e:
        raise UsageError(str(e).strip("'\"")) from e
    if args.image:
        import cv2

        if not cv2.imwrite(args.image, draw(result.obs, result.graph)[:, :, ::-1]):
            print(f"mallvi: could not write {args.image}", file=sys.stderr)
            return EXIT_FAILED
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(result.graph.to_text())
        for oid, (name, dist) in result.nearest_truth.items():
            print(f"  {oid}: nearest simulator object {name} at {dist * 1000:.1f} mm")
        print("ms: " + ", ".join(f"{k} {v:.1f}" for k, v in result.times_ms.items()))
    return EXIT_OK if result.graph.objects else EXIT_FAILED


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mallvi", description="Multi-agent dual-arm manipulation (MALLVi) in sim or on a rig.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages to stderr")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("doctor", help="report the render device, library versions and installed extras")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--base-url", help="also check this OpenAI-compatible endpoint: models, schema-constrained "
                                      "decoding, vision (key: $OPENAI_API_KEY)")
    p.add_argument("--llm-model", help="the endpoint's model to check (default: the first it lists)")
    p.add_argument("--llm-timeout", type=float, default=30.0, help="seconds per endpoint request (default: 30)")
    p.set_defaults(func=_cmd_doctor)

    p = sub.add_parser("viz", help="browse run traces and benchmark results in a local web viewer")
    p.add_argument("dir", help="a trace directory, a folder of them, or a `mallvi bench` output folder")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8050, help="port to listen on (default: 8050)")
    p.set_defaults(func=_cmd_viz)

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
    p.set_defaults(func=_cmd_calibrate)

    p = sub.add_parser("run", help="run one instruction through the agent graph in the simulator")
    _add_run_options(p)
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("bench", help="run ST-BiBench tiers (grounding, planning, fine) and report beside the paper")
    p.add_argument("--tier", required=True, help="grounding | planning | fine")
    p.add_argument("--tasks", default="all", help="'all' (default) or a comma-separated list of the tier's tasks")
    p.add_argument("--episodes", type=int, default=100, help="episodes per task (default: 100, as in the paper)")
    p.add_argument("--seed-start", type=int, default=100000, help="first seed (default: 100000)")
    p.add_argument("--agent", choices=["mallvi", "mallvi-no-reflector", "single", "expert"], default="mallvi",
                   help="mallvi (the graph, default), mallvi-no-reflector, single (one planner model) or expert")
    p.add_argument("--backend", choices=["rules", "llm"], default="rules", help="backend of the graph's agents")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $MALLVI_BASE_URL); key: $OPENAI_API_KEY")
    p.add_argument("--llm-model", help="planner / text model")
    p.add_argument("--vlm-model", help="vision model")
    p.add_argument("--perception", choices=["sim", "color", "neural"], default="color", help="default: color")
    p.add_argument("--workers", type=int, default=None,
                   help="local worker processes (default: one per free core, at least one)")
    p.add_argument("--station", choices=["sim", "twin"], default="sim",
                   help="sim (default) or twin: the rig's drivers, camera and skills on a simulated twin of each "
                        "scene (graph agents only; needs --calibration)")
    p.add_argument("--calibration", help="--station twin: calibration YAML from `mallvi calibrate --robot twin`")
    p.add_argument("--ray-address", help="run episodes as Ray tasks on this cluster (e.g. ray://head:10001)")
    p.add_argument("--contingency", choices=["none", "easy", "medium", "hard"], default="none",
                   help="simulated fault level (default: none)")
    p.add_argument("--out", required=True, help="output folder; rerunning with the same folder resumes")
    p.add_argument("--no-images", action="store_true", help="do not store the head image of each episode")
    p.add_argument("--single-mode", choices=["mallvi", "paper"], default="mallvi",
                   help="single agent, Tier 2: 'paper' freezes the episode after a failed motion plan as the original "
                        "benchmark's code does (default: mallvi, a failed plan is a failed action)")
    p.add_argument("--randomization", choices=["original", "none"], default="original",
                   help="original (default): each task's table texture, light colours and distractors as the "
                        "original benchmark configures them; none: a plain, uncluttered table")
    p.add_argument("--example-images", metavar="DIR",
                   help="single agent: a folder of <task>.png example images sent with every turn")
    p.add_argument("--no-reuse", action="store_true",
                   help="render every frame and scan every image afresh (same results, slower; for cost measurements)")
    p.add_argument("--json", action="store_true", help="print results.json on stdout instead of the table")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=_cmd_bench)

    p = sub.add_parser("perceive", help="run perception on one simulator scene and print its scene graph")
    p.add_argument("--task", required=True, help="scene name, e.g. grounding_dense")
    p.add_argument("--seed", type=int, default=100000, help="scene seed (default: 100000)")
    p.add_argument("--perception", choices=["sim", "color", "neural"], default="color", help="default: color")
    p.add_argument("--camera", default="head", help="head (default) or front")
    p.add_argument("--image", help="also write the frame with the perceived objects marked to this PNG")
    p.add_argument("--json", action="store_true", help="print the scene graph, timings and truth distances as JSON")
    p.set_defaults(func=_cmd_perceive)

    p = sub.add_parser("demo", help="the default job: stack the green block on the red block in the simulator")
    _add_run_options(p, demo=True)
    p.set_defaults(func=_cmd_demo)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        code: int = args.func(args)
    except UsageError as e:
        print(f"mallvi: error: {_safe(str(e))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("mallvi: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return code


if __name__ == "__main__":
    raise SystemExit(main())
