"""Perception figures on this machine: stage timings, and detection recall / 3D error on the grounding scenes.

Usage:
    .venv/bin/python scripts/perception_figures.py [--seeds 50] [--seed-start 100000] [--timing-frames 20]
                                                   [--timing-only] [--out results.json]

Timings: mean milliseconds per head-camera frame (640x360) for each stage of ``Perception.describe`` (detect,
fuse, segment, grasp, project; the last three summed over the frame's objects), for the ``color`` and ``sim``
pipelines. Accuracy: for each grounding scene and seed, every block visible in the simulator's segmentation
is matched one-to-one to a detection by box IoU >= 0.5 (recall), its IoU is recorded, and the 3D error is the
distance between the localised centre and the simulator's block centre. "extra" counts detections that match
no simulator object at all (clutter objects are objects: detecting a coloured clutter item is not counted).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from typing import Any

import numpy as np

from mallvi.perception.evaluation import add_errors, match, truth_from_sim
from mallvi.perception.pipeline import make_perception
from mallvi.sim_bridge.scene_spec import SceneSetupError
from mallvi.sim_bridge.world import SimWorld

SCENES = ("grounding_sparse", "grounding_dense", "grounding_cluttered")
MODES = ("color", "sim")
STAGES = ("detect", "fuse", "segment", "grasp", "project")


def _centres(world: SimWorld, blocks_only: bool) -> dict[str, tuple[float, float, float]]:
    out = {}
    for name, obj in world.objects.items():
        if blocks_only and obj.label != "block":
            continue
        info = world.truth.get_object(name)
        out[name] = info.points["center"].position_m if "center" in info.points else info.pose.position_m
    return out


def timings(frames: int, seed_start: int) -> dict[str, dict[str, float]]:
    per_mode: dict[str, dict[str, list[float]]] = {m: defaultdict(list) for m in MODES}
    for k in range(frames):
        scene = SCENES[k % len(SCENES)]
        with SimWorld.create(scene, seed_start + k) as world:
            obs = world.observe("head")
            for mode in MODES:
                p = make_perception(mode)
                t0 = time.perf_counter()
                p.describe(obs)
                total = 1000.0 * (time.perf_counter() - t0)
                for stage in STAGES:
                    per_mode[mode][stage].append(p.times.ms.get(stage, 0.0))
                per_mode[mode]["total"].append(total)
    return {m: {s: float(np.mean(v)) for s, v in d.items()} for m, d in per_mode.items()}


def accuracy(seeds: int, seed_start: int) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for scene in SCENES:
        acc: dict[str, dict[str, list[float]]] = {m: defaultdict(list) for m in MODES}
        done, seed, skipped = 0, seed_start, []
        while done < seeds:
            try:
                world = SimWorld.create(scene, seed)
            except SceneSetupError:
                skipped.append(seed)
                seed += 1
                continue
            with world:
                obs = world.observe("head")
                blocks = truth_from_sim(obs, _centres(world, blocks_only=True))
                everything = truth_from_sim(obs, _centres(world, blocks_only=False))
                for mode in MODES:
                    p = make_perception(mode)
                    dets = p.detect(obs, [])
                    score = match(dets, blocks, 0.5)
                    positions = {i: p.localize(obs, dets[i]).position_world for i, _ in score.matches.values()}
                    add_errors(score, positions, blocks)
                    a = acc[mode]
                    a["visible"].append(len(score.matches) + len(score.missed))
                    a["found"].append(len(score.matches))
                    a["iou"].extend(iou for _, iou in score.matches.values())
                    a["err_mm"].extend(1000.0 * e for e in score.errors_m.values())
                    a["extra"].append(len(match(dets, everything, 0.5).false_positives))
            done += 1
            seed += 1
        out[scene] = {}
        for mode, a in acc.items():
            err = np.asarray(a["err_mm"]) if a["err_mm"] else np.zeros(1)
            iou = np.asarray(a["iou"]) if a["iou"] else np.zeros(1)
            out[scene][mode] = {
                "episodes": seeds, "skipped_seeds": skipped,
                "recall": float(sum(a["found"]) / max(1, sum(a["visible"]))),
                "iou_ge_0.8": float(np.mean(iou >= 0.8)), "iou_mean": float(iou.mean()),
                "err_mm_median": float(np.median(err)), "err_mm_p95": float(np.percentile(err, 95)),
                "err_mm_max": float(err.max()), "extra_detections": int(sum(a["extra"])),
            }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--seed-start", type=int, default=100000)
    ap.add_argument("--timing-frames", type=int, default=20)
    ap.add_argument("--timing-only", action="store_true", help="skip the accuracy part")
    ap.add_argument("--out", default="")
    args = ap.parse_args()

    t = timings(args.timing_frames, args.seed_start)
    print(f"## ms per frame ({args.timing_frames} head frames, 640x360)\n")
    print("| pipeline | " + " | ".join(STAGES) + " | total |")
    print("|---|" + "---|" * (len(STAGES) + 1))
    for mode, d in t.items():
        print(f"| {mode} | " + " | ".join(f"{d[s]:.1f}" for s in STAGES) + f" | {d['total']:.1f} |")

    if args.timing_only:
        return
    a = accuracy(args.seeds, args.seed_start)
    print(f"\n## grounding scenes, {args.seeds} seeds from {args.seed_start}\n")
    print("| scene | pipeline | recall | IoU>=0.8 | mean IoU | 3D err median / p95 / max (mm) | extra dets |")
    print("|---|---|---|---|---|---|---|")
    for scene, by_mode in a.items():
        for mode, r in by_mode.items():
            print(f"| {scene} | {mode} | {r['recall']:.3f} | {r['iou_ge_0.8']:.3f} | {r['iou_mean']:.3f} | "
                  f"{r['err_mm_median']:.1f} / {r['err_mm_p95']:.1f} / {r['err_mm_max']:.1f} | "
                  f"{r['extra_detections']} |")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"timings_ms": t, "accuracy": a}, fh, indent=2)


if __name__ == "__main__":
    main()
