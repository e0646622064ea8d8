"""Figures for the scene registry: build time per scene and how many seeds cannot be set up.

Usage: .venv/bin/python scripts/sim_objects_figures.py [--seeds N]
Builds every registered scene for seeds 100000.. into a bare SAPIEN scene (no arms, no cameras) and prints a
Markdown table: mean/max build time, objects per scene, seeds skipped (SceneSetupError), and the physics time
to settle the scene for 1 s of simulated time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import sapien

from mallvi.sim_bridge.scene_spec import SceneSetupError
from mallvi.sim_bridge.scenes import build_scene, scene_names


def _scene(table_top_z: float) -> sapien.Scene:
    scene = sapien.Scene()
    scene.set_timestep(1 / 250)
    b = scene.create_actor_builder()
    b.add_box_collision(half_size=[0.6, 0.35, 0.025])
    b.set_initial_pose(sapien.Pose([0, 0, table_top_z - 0.025]))
    b.build_static("table")
    return scene


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=100)
    args = parser.parse_args()
    rows = ["| scene | build ms (mean / max) | objects (mean) | seeds skipped | 1 s physics, ms (mean) |",
            "|---|---|---|---|---|"]
    for name in scene_names():
        build_ms, physics_ms, counts, skipped = [], [], [], 0
        for seed in range(100000, 100000 + args.seeds):
            scene = _scene(0.725)
            t0 = time.perf_counter()
            try:
                contents = build_scene(name, scene, seed, 0.725)
            except SceneSetupError:
                skipped += 1
                continue
            build_ms.append(1000 * (time.perf_counter() - t0))
            counts.append(len(contents.objects))
            t0 = time.perf_counter()
            for _ in range(250):
                scene.step()
            physics_ms.append(1000 * (time.perf_counter() - t0))
        rows.append(f"| {name} | {statistics.mean(build_ms):.2f} / {max(build_ms):.2f} | "
                    f"{statistics.mean(counts):.1f} | {skipped} / {args.seeds} | {statistics.mean(physics_ms):.1f} |")
    sys.stdout.write("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
