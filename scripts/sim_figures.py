"""Figures of the simulation core on this machine: render time per camera, physics rate, plan times, and the wall
time of a scripted pick-and-place against the simulated time it covers.

Usage: .venv/bin/python scripts/sim_figures.py [--frames 20] [--plans 30] [--seed 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.sim_bridge.layout import top_down_quat_wxyz
from mallvi.sim_bridge.world import SimWorld


def render_ms(frames: int, seed: int) -> dict[str, float]:
    out: dict[str, float] = {}
    with SimWorld.create("stack_blocks_three", seed, cameras=("head", "front")) as w:
        w.settle()
        for cam in w.camera_names:
            w.observe(cam)  # first frame compiles shaders
            t0 = time.perf_counter()
            for _ in range(frames):
                w.step(1)
                w.observe(cam)
            out[cam] = 1000.0 * (time.perf_counter() - t0) / frames
        t0 = time.perf_counter()
        for _ in range(frames):
            w.step(1)
            w.render_all()
        out["all (head+front, one scene update)"] = 1000.0 * (time.perf_counter() - t0) / frames
    return out


def physics_rate(seed: int, steps: int = 2500) -> float:
    with SimWorld.create("stack_blocks_three", seed, render=False) as w:
        t0 = time.perf_counter()
        w.step(steps)
        return steps / (time.perf_counter() - t0)


def plan_times(n: int, seed: int) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    times: dict[str, list[float]] = {"rrt_connect": [], "screw": []}
    failures = {"rrt_connect": 0, "screw": 0}
    with SimWorld.create("stack_blocks_three", seed, render=False) as w:
        planner = w.planners["left"]
        w.skills.motion.sync_planner("left", with_objects=True)
        q0 = w.arms["left"].joint_positions_rad()
        for _ in range(n):
            p = (rng.uniform(-0.45, -0.15), rng.uniform(-0.15, 0.05), rng.uniform(0.95, 1.08))
            target = Pose(p, top_down_quat_wxyz(float(rng.choice([math.pi / 2, math.pi, -math.pi / 2]))))
            r = planner.plan_to_pose(target, q0)
            if r.ok:
                times["rrt_connect"].append(r.planning_s)
                goal = r.path_rad[-1]
                down = Pose((p[0], p[1], p[2] - 0.08), target.quat_wxyz)
                s = planner.plan_straight(down, goal)
                if s.ok:
                    times["screw"].append(s.planning_s)
                else:
                    failures["screw"] += 1
            else:
                failures["rrt_connect"] += 1
    return {
        k: {
            "n": len(v),
            "failed": failures[k],
            "median_ms": 1000.0 * float(np.median(v)) if v else float("nan"),
            "p95_ms": 1000.0 * float(np.percentile(v, 95)) if v else float("nan"),
        }
        for k, v in times.items()
    }


def pick_and_place(seed: int) -> dict[str, float | bool | str]:
    """grasp_actor + lift 0.1 m + place_actor on the table + back_to_origin, without rendering."""
    with SimWorld.create("stack_blocks_two", seed, render=False) as w:
        w.settle()
        names = w.truth.object_names()
        obj = names[0]
        x = w.truth.get_object(obj).pose.position_m[0]
        side: ArmSide = "left" if x < 0 else "right"
        sim0, t0 = w.sim_time_s, time.perf_counter()
        steps = [
            w.skills.grasp_actor(obj, side),
            w.skills.move_by_displacement(side, z=0.1),
        ]
        spot = [-0.2 if side == "left" else 0.2, -0.12, w.table_top_z]  # a free spot on the arm's own side
        steps.append(w.skills.place_actor(obj, side, spot))
        steps.append(w.skills.back_to_origin(side))
        wall = time.perf_counter() - t0
        sim = w.sim_time_s - sim0
        return {
            "ok": all(s.ok for s in steps),
            "messages": "; ".join(s.message for s in steps if not s.ok),
            "wall_s": wall,
            "sim_s": sim,
            "speedup": sim / wall,
            "planning_s": w.skills.motion.stats.planning_s,
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--frames", type=int, default=20)
    ap.add_argument("--plans", type=int, default=30)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    render = render_ms(args.frames, args.seed)
    physics = physics_rate(args.seed)
    plans = plan_times(args.plans, args.seed)
    pp = pick_and_place(args.seed)
    if args.json:
        figures = {"render_ms_per_frame": render, "physics_steps_per_s": physics, "plan_time": plans,
                   "pick_and_place": pp}
        print(json.dumps(figures, indent=2))
        return
    for cam, ms in render.items():
        print(f"render {cam}: {ms:.1f} ms/frame")
    print(f"physics: {physics:.0f} steps/s (1/250 s steps)")
    for name, st in plans.items():
        print(f"plan {name}: median {st['median_ms']:.1f} ms, p95 {st['p95_ms']:.1f} ms "
              f"(n={st['n']:.0f}, failed {st['failed']:.0f})")
    print(f"pick-and-place: ok={pp['ok']} wall {pp['wall_s']:.2f} s for {pp['sim_s']:.2f} s simulated "
          f"({pp['speedup']:.1f}x faster than sim time) {pp['messages']}")


if __name__ == "__main__":
    main()
