"""Reach map of the simulated arms: where on the table a 5 cm block can be grasped, upright or leaned.

Usage: .venv/bin/python scripts/reach_map.py [--step 0.05]

For each arm and each cell of a grid over the table, the block is put there and the grasp candidates of
``grasp_actor`` are screened exactly as the skill screens them (safety guard, then inverse kinematics of the grasp
and pre-grasp poses, other objects out of the way). A cell prints "#" when an upright top-down grasp reaches it,
the lean in tens of degrees ("2" for 25°, "4" for 40°) when only a leaned grasp does, and "." when none does.
Rows run from the back of the table (top) to the front; columns from x = -0.50 (left) to +0.50.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import sapien

from mallvi.sim_bridge.grasp_frames import TOP_GRASP_LEANS_DEG, grasp_frames, leaned_top_grasps
from mallvi.sim_bridge.world import SimWorld


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=float, default=0.05, help="grid step in metres")
    args = ap.parse_args(argv)
    xs = np.arange(-0.50, 0.50 + 1e-9, args.step)
    ys = np.arange(-0.30, 0.30 + 1e-9, args.step)
    with SimWorld.create("stack_blocks_two", 0, render=False, grasp_refusal_threshold_m=None) as w:
        w.settle()
        block, other = w.objects["green_block"], w.objects["red_block"]
        other.entity.set_pose(sapien.Pose([0.0, 0.33, w.table_top_z]))  # out of the way, at the back edge
        z = w.table_top_z
        for side in ("left", "right"):
            w.skills.motion.sync_planner(side, with_objects=False)
            print(f"{side} arm (rows y = {ys[-1]:+.2f} .. {ys[0]:+.2f}; columns x = {xs[0]:+.2f} .. {xs[-1]:+.2f})")
            for y in ys[::-1]:
                row = ""
                for x in xs:
                    block.entity.set_pose(sapien.Pose([float(x), float(y), z]))
                    frames = grasp_frames(w.truth.get_object("green_block"), None)
                    assert not isinstance(frames, str)
                    mark = "."
                    if w.skills.grasping.reachable_grasps(side, frames, 0.1, 0.0, []):
                        mark = "#"
                    else:
                        for lean in TOP_GRASP_LEANS_DEG:
                            if w.skills.grasping.reachable_grasps(side, leaned_top_grasps(frames, lean), 0.1, 0.0, []):
                                mark = str(lean // 10)
                                break
                    row += mark
                print(f"{y:+.2f} {row}")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
