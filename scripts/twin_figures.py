"""Rehearse the real rig on its simulated twin and measure it (docs/real_rig.md, "Rehearse before the hardware").

    PYTHONPATH=. python scripts/twin_figures.py --out figures/twin --parts calibration,perception \
        --calibration-seeds 2000:2002 --perception-seeds 2000:2010
    PYTHONPATH=. python scripts/twin_figures.py --parts success --seeds 2000:2020 --out figures/twin_success \
        --calibration calib_0.7m.yaml,calib_0.6m.yaml --traces twin_traces/

Parts (``--parts``): ``calibration`` (camera and mount error against the twin's truth for 10 and 20 views per arm,
one capture per seed and view count), ``perception`` (perceived position error of blocks, bowls, bottles and a
lying bar through the software RealSense and the first calibration seed's ``--run-views`` calibration),
``success`` (the five block/handover/basket tasks on the twin station and on the simulator station, same seeds,
rules backend, colour perception; each failure's reason, guard refusals, depth-cloud stops and wall time per
episode; seeds in the outer loop, each row also appended to OUT/success_rows.jsonl as it is measured). Each task
runs with the calibration of its scene's arm layout (arms 0.6 m or 0.7 m apart): pass one per layout with
``--calibration``. Results go to OUT/twin_figures.json; progress to stderr.
Seeds used while developing the twin: 0 (and 3 for the arm/camera tests); report on seeds >= 1000. The calibration
and perception parts were reworked on seeds 500-501 (calibration) and 1000-1009 (perception), the success part on
0-2 and 1000-1002; report them on >= 2000.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from mallvi.bench.task_scenes import scene_catalog
from mallvi.config import RunConfig
from mallvi.contracts.geometry import Pose
from mallvi.orchestration.run_instruction import run
from mallvi.orchestration.stations import RunRequest
from mallvi.perception.pipeline import make_perception
from mallvi.robot_drivers.calibration.calibration_files import calibrate_rig, load_views, save_rig_calibration
from mallvi.sim_bridge.world import SimWorld
from mallvi.twin.calibration_views import error_vs_truth
from mallvi.twin.twin_rig import capture_calibration_views, open_twin

SUCCESS_TASKS = ("stack_blocks_two", "stack_blocks_three", "blocks_ranking_rgb", "handover_block",
                 "place_object_basket")
PERCEPTION_SCENES = {"block": "stack_blocks_three", "bowl": "stack_bowls_three", "bottle": "put_bottles_dustbin",
                     "lying bar": "grab_roller"}
CALIBRATION_SCENE = "stack_blocks_two"
GUARD_WORDS = ("workspace", "table", "clearance", "speed", "step", "joint limit", "not finite")


def _log(msg: str) -> None:
    print(f"[twin] {msg}", file=sys.stderr, flush=True)


def _seeds(text: str) -> list[int]:
    lo, hi = (int(v) for v in text.split(":"))
    return list(range(lo, hi))


def calibrate(views: int, seed: int, folder: Path) -> tuple[Path, dict[str, Any]]:
    t0 = time.perf_counter()
    views_dir = folder / f"views_{seed}_{views}"
    capture_calibration_views(CALIBRATION_SCENE, seed, views_dir, views)
    t_solve = time.perf_counter()
    world = SimWorld.create(CALIBRATION_SCENE, seed, render=False)
    from mallvi.twin.arms import true_arm_mounts

    anchor = true_arm_mounts(world)["left"].as_matrix()  # the anchor's mount as a tape measure gives it
    calib, skipped = calibrate_rig(load_views(views_dir), "left", anchor)
    solve_s = time.perf_counter() - t_solve
    out = save_rig_calibration(folder / f"calibration_{seed}_{views}.yaml", calib)
    rig = open_twin(scene_catalog().get(CALIBRATION_SCENE).spec, seed, enable=False)
    try:
        err = error_vs_truth(calib, rig.world, rig.true_T_world_cam)
    finally:
        rig.close()
        world.close()
    row = {"seed": seed, "views_per_arm": views, "camera_mm": round(err.camera_mm, 2),
           "camera_deg": round(err.camera_deg, 3), "right_mount_mm": round(err.mounts_mm.get("right", float("nan")), 2),
           "corners_px_rms": {k: round(a.reprojection_px_rms, 3) for k, a in calib.arms.items()},
           "skipped": {k: len(v) for k, v in skipped.items()},
           "dropped": {k: len(a.dropped_views) for k, a in calib.arms.items()},
           "wall_s": round(time.perf_counter() - t0, 1), "solve_s": round(solve_s, 1)}
    _log(f"calibration {views} views: {row}")
    return out, row


def perception_errors(calibration: Path, seeds: list[int]) -> dict[str, Any]:
    """Per object kind: how many true objects have a perceived object within 10 cm of their box centre, the
    error's median and p95 (3D and table-plane), and perceived objects matching no true one."""
    from mallvi.robot_drivers.calibration.calibration_files import load_rig_calibration

    calib = load_rig_calibration(calibration)
    mounts = {s: Pose.from_matrix(a.T_world_base) for s, a in calib.arms.items()}
    perception = make_perception("color")
    rows: dict[str, Any] = {}
    for kind, scene in PERCEPTION_SCENES.items():
        errors: list[float] = []
        errors_xy: list[float] = []
        missed = extra = total = 0
        labels: dict[str, int] = {}
        for seed in seeds:
            rig = open_twin(scene_catalog().get(scene).spec, seed, mounts=mounts, T_world_cam=calib.T_world_cam,
                            enable=False)
            try:
                graph = perception.describe(rig.camera.read(), remember=False)
                cands = [np.asarray(o.position_world) for o in graph.objects]
                used: set[int] = set()
                for obj in rig.world.objects.values():
                    if kind not in obj.name and not (kind == "lying bar" and "roller" in obj.name):
                        continue  # only the kind measured (not the dustbin the bottles go into)
                    total += 1
                    truth = np.asarray((obj.entity.get_pose() * obj.box_center_local()).p, dtype=float)
                    d = [float(np.linalg.norm(c - truth)) for c in cands]
                    k = int(np.argmin(d)) if d else -1
                    if k < 0 or d[k] > 0.1:
                        missed += 1
                        continue
                    used.add(k)
                    errors.append(1000.0 * d[k])
                    errors_xy.append(1000.0 * float(np.linalg.norm(cands[k][:2] - truth[:2])))
                    labels[graph.objects[k].label] = labels.get(graph.objects[k].label, 0) + 1
                extra += sum(1 for i, o in enumerate(graph.objects) if i not in used and not _other_object(
                    o.position_world, rig.world, kind))
            finally:
                rig.close()
        rows[kind] = {"scene": scene, "objects": total, "n": len(errors), "missed": missed,
                      "median_mm": round(float(np.median(errors)), 1) if errors else None,
                      "p95_mm": round(float(np.percentile(errors, 95)), 1) if errors else None,
                      "median_xy_mm": round(float(np.median(errors_xy)), 1) if errors_xy else None,
                      "p95_xy_mm": round(float(np.percentile(errors_xy, 95)), 1) if errors_xy else None,
                      "labels": labels, "unmatched_perceived": extra}
        _log(f"perception {kind}: {rows[kind]}")
    return rows


def _other_object(position: tuple[float, float, float], world: SimWorld, kind: str) -> bool:
    """Whether a perceived position is within 10 cm of a true object of another kind (e.g. the dustbin)."""
    for obj in world.objects.values():
        if kind in obj.name or (kind == "lying bar" and "roller" in obj.name):
            continue
        centre = np.asarray((obj.entity.get_pose() * obj.box_center_local()).p, dtype=float)
        if float(np.linalg.norm(np.asarray(position) - centre)) < 0.1:
            return True
    return False


def _stops(trace_dir: Path) -> tuple[int, int]:
    """(guard refusals, depth-cloud stops) in one episode's trace, from the Actor's reports."""
    refusals = stops = 0
    events = trace_dir / "events.jsonl"
    if not events.is_file():
        return 0, 0
    for line in events.read_text().splitlines():
        e = json.loads(line)
        if e.get("kind") != "node_end" or e.get("node") != "actor":
            continue
        report = (e.get("outputs") or {}).get("actor_report") or {}
        message = str(report.get("message") or "")
        if report.get("ok", True):
            continue
        # Measurement only: the guard's messages name what it checked.
        if "obstacle point" in message:
            stops += 1
        elif any(w in message for w in GUARD_WORDS):
            refusals += 1
    return refusals, stops


def mount_spacing_m(calibration: Path) -> float:
    """How far apart the calibration puts the two arms' mounts (m)."""
    from mallvi.robot_drivers.calibration.calibration_files import load_rig_calibration

    arms = load_rig_calibration(calibration).arms
    return float(np.linalg.norm(arms["right"].T_world_base[:3, 3] - arms["left"].T_world_base[:3, 3]))


def calibration_for(task: str, calibrations: list[Path]) -> Path:
    """The calibration of the rig layout the task's scene uses (its arm spacing): a rig whose arms are moved is
    calibrated again, and so is the twin. Raises ValueError when none is within 1 cm."""
    spacing = scene_catalog().get(task).spec.arm_spacing_m
    best = min(calibrations, key=lambda c: abs(mount_spacing_m(c) - spacing))
    if abs(mount_spacing_m(best) - spacing) > 0.01:
        raise ValueError(f"{task}: its arms stand {spacing:.2f} m apart and no calibration given is of that layout; "
                         f"calibrate in it (`mallvi calibrate --robot twin --task {task}`) and pass it too")
    return best


def success(calibrations: list[Path], seeds: list[int], tasks: tuple[str, ...], folder: Path,
            rows_file: Path | None = None) -> list[dict[str, Any]]:
    """Each (task, seed) on the twin and on the simulator station; each row is also appended to ``rows_file`` as
    it is measured, so a run cut short keeps what it measured."""
    rows = []
    layout: dict[str, Path] = {}
    for task in tasks:
        try:
            layout[task] = calibration_for(task, calibrations)
        except ValueError as e:  # measure the tasks that have one; say which have not
            _log(f"skipped: {e}")
    for task, calibration in layout.items():
        _log(f"{task}: calibration {calibration} (arms {mount_spacing_m(calibration):.3f} m apart)")
    for seed in seeds:  # seeds outside: a run cut short has the same seeds done for every task
        for task, calibration in layout.items():
            for station in ("twin", "sim"):
                cfg = RunConfig(backend="rules", perception="color", robot=station)
                trace = folder / "traces" / f"{task}_{seed}_{station}"
                t0 = time.perf_counter()
                try:
                    request = RunRequest(task=task, seed=seed, trace_dir=trace,
                                         calibration=calibration if station == "twin" else None)
                    result = run(request, cfg, catalog=scene_catalog())
                    ok, reason = result.success, (result.failure_report or {}).get("reason") or result.refusal
                except Exception as e:  # a crash is a finding to report, not a reason to stop measuring
                    ok, reason = False, f"crashed: {type(e).__name__}: {e}"
                refusals, stops = _stops(trace)
                row = {"task": task, "seed": seed, "station": station, "success": bool(ok),
                       "reason": None if ok else reason, "guard_refusals": refusals, "cloud_stops": stops,
                       "wall_s": round(time.perf_counter() - t0, 1)}
                rows.append(row)
                _log(json.dumps(row))
                if rows_file is not None:
                    with rows_file.open("a") as f:
                        f.write(json.dumps(row) + "\n")
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="figures/twin")
    p.add_argument("--seeds", default="1000:1003", help="success episodes' seeds, lo:hi (default 1000:1003)")
    p.add_argument("--perception-seeds", default="2000:2010")
    p.add_argument("--calibration-seeds", default="2000:2002",
                   help="one 10-view and one 20-view calibration per seed, lo:hi (default 2000:2002)")
    p.add_argument("--tasks", default=",".join(SUCCESS_TASKS))
    p.add_argument("--parts", default="calibration,perception,success")
    p.add_argument("--traces", help="keep the success episodes' traces in this folder (default: discarded)")
    p.add_argument("--run-views", type=int, choices=[10, 20], default=20,
                   help="which calibration the perception and success parts use (default: the 20-view one)")
    p.add_argument("--calibration", help="use these calibration files instead, comma-separated, one per arm layout "
                                         "(each task takes the one whose mounts are spaced as in its scene)")
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    parts = set(args.parts.split(","))
    figures: dict[str, Any] = {"seeds": args.seeds, "perception_seeds": args.perception_seeds,
                               "calibration_seeds": args.calibration_seeds}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if "calibration" in parts:
            figures["calibration"] = []
            for i, seed in enumerate(_seeds(args.calibration_seeds)):
                for views in (10, 20):
                    path, row = calibrate(views, seed, folder)
                    figures["calibration"].append(row)
                    (out / f"calibration_{seed}_{views}.yaml").write_text(path.read_text())
                    if i == 0:  # the first seed's calibrations are the ones the other parts use
                        (out / f"calibration_{views}.yaml").write_text(path.read_text())
                    (out / "twin_figures.json").write_text(json.dumps(figures, indent=2))
        run_calibrations = ([Path(c) for c in args.calibration.split(",")] if args.calibration
                            else [out / f"calibration_{args.run_views}.yaml"])
        run_calibration = run_calibrations[0]
        figures["run_calibration"] = ",".join(str(c) for c in run_calibrations)
        if "perception" in parts:
            figures["perception"] = perception_errors(run_calibration, _seeds(args.perception_seeds))
        (out / "twin_figures.json").write_text(json.dumps(figures, indent=2))
        if "success" in parts:
            traces = Path(args.traces) if args.traces else folder
            figures["success"] = success(run_calibrations, _seeds(args.seeds), tuple(args.tasks.split(",")), traces,
                                         rows_file=out / "success_rows.jsonl")
    (out / "twin_figures.json").write_text(json.dumps(figures, indent=2))
    _log(f"written {out / 'twin_figures.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
