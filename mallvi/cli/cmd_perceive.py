"""``mallvi perceive``: the perception stack on one simulator frame, its scene graph and timings."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mallvi.cli.common import EXIT_FAILED, EXIT_OK, UsageError
from mallvi.cli.run_options import check_seed

if TYPE_CHECKING:
    from mallvi.sim_bridge.scene_spec import SceneSpec


def register(sub: Any) -> None:
    p = sub.add_parser("perceive", help="run perception on one simulator scene and print its scene graph")
    p.add_argument("--task", required=True, help="scene or benchmark task name, e.g. grounding_dense or "
                                                  "stack_bowls_three (built as `mallvi bench` builds it)")
    p.add_argument("--seed", type=int, default=100000, help="scene seed (default: 100000)")
    p.add_argument("--perception", choices=["sim", "color", "neural"], default="color", help="default: color")
    p.add_argument("--camera", default="head", help="head (default) or front")
    p.add_argument("--image", help="also write the frame with the perceived objects marked to this PNG")
    p.add_argument("--json", action="store_true", help="print the scene graph, timings and truth distances as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mallvi.perception.frame_report import draw, perceive_frame
    from mallvi.sim_bridge.snapshot import truth_frame

    check_seed(args.seed)
    if args.image and (not Path(args.image).parent.is_dir() or not args.image.lower().endswith(".png")):
        raise UsageError(f"--image must be a .png path in an existing folder, got {args.image!r}")
    try:
        scene = _scene(args.task)
        result = perceive_frame(args.task, args.seed, args.perception,
                                lambda: truth_frame(scene, args.seed, args.camera))
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


def _scene(name: str) -> str | SceneSpec:
    """A registered scene's name, or a benchmark task's scene as the bench builds it (its original domain
    randomisation); KeyError names both lists."""
    from mallvi.bench.tasks import TASKS, get_task
    from mallvi.sim_bridge.scenes import scene_names

    if name in scene_names():
        return name
    if name in TASKS:
        return get_task(name).scene_spec("original")
    raise KeyError(f"unknown scene {name!r}; known scenes: {', '.join(scene_names())}; benchmark tasks: "
                   f"{', '.join(TASKS)}")
