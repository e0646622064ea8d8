"""Render the single agent's example images (mallvi/bench/data/example_<task>.png) from our own scenes.

The original benchmark attaches ``script/example_img/<task>.png`` to every Tier 2 turn (and place_burger_fries's to
its Tier 3 turns): a slide with "Example", the task's instruction, the head camera at the start and at the goal,
and the task's example reply. Ours has the same layout, with our head camera at the start of an episode and after
the expert (under the original's skill semantics) has solved it; the slide is 1885×726 px, as the original's
blocks_cross_shape.png, and stored as a 256-colour PNG to keep the package small.

    scripts/make_example_images.py                 # every Tier 2 task, first solved seed from 1250000
    scripts/make_example_images.py --tasks hanging_mug --seed-start 1250100
"""

from __future__ import annotations

import argparse
import json
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

HERE = Path(__file__).resolve().parents[1]
OUT_DIR = HERE / "mallvi" / "bench" / "data"
SIZE = (1885, 726)
FRAME = (540, 304)  # each head-camera frame (640×360 scaled)
BLUE = (31, 78, 121)


def font(size: int) -> Any:
    return ImageFont.load_default(size=size)


def wrap_lines(text: str, fnt: Any, width_px: int, draw: ImageDraw.ImageDraw) -> list[str]:
    """``text`` broken into lines no wider than ``width_px`` (existing line breaks kept, indentation kept)."""
    out: list[str] = []
    for raw in text.splitlines():
        indent = raw[: len(raw) - len(raw.lstrip())]
        words = raw.strip().split(" ")
        line = indent
        for w in words:
            trial = (line + " " + w) if line.strip() else indent + w
            if draw.textlength(trial, font=fnt) <= width_px:
                line = trial
            else:
                out.append(line)
                line = indent + "    " + w
        out.append(line)
    return out


def slide(instruction: str, example: dict[str, Any], start: np.ndarray, goal: np.ndarray) -> Image.Image:
    img = Image.new("RGB", SIZE, "white")
    draw = ImageDraw.Draw(img)
    draw.text((18, 22), "Example", fill="black", font=font(34))
    box = (200, 8, 1560, 84)
    draw.rectangle(box, outline=BLUE, width=2)
    inst_font = font(17)
    lines = wrap_lines("instruction: " + instruction, inst_font, box[2] - box[0] - 20, draw)
    for i, line in enumerate(lines[:3]):
        draw.text((box[0] + 10, box[1] + 6 + 22 * i), line, fill=BLUE, font=inst_font)
    for i, frame in enumerate((start, goal)):
        pic = Image.fromarray(frame).resize(FRAME, Image.Resampling.LANCZOS)
        img.paste(pic, (10, 100 + i * (FRAME[1] + 10)))
    text = json.dumps(example, indent=4, ensure_ascii=False)
    left, top, width, height = 580, 100, SIZE[0] - 600, SIZE[1] - 110
    for size in range(17, 9, -1):  # the largest font whose wrapped reply fits beside the frames
        fnt = font(size)
        lines = wrap_lines(text, fnt, width, draw)
        step = int(size * 1.25)
        if len(lines) * step <= height:
            break
    for i, line in enumerate(lines):
        draw.text((left, top + i * step), line, fill="black", font=fnt)
    return img


def render(task_name: str, seed_start: int, tries: int) -> tuple[np.ndarray, np.ndarray, int] | None:
    """Head-camera frames at the start and after the expert solved the task, for the first seed it solves."""
    from mallvi.bench.agents.expert import ExpertAgent
    from mallvi.bench.episode import seed_global_rngs
    from mallvi.bench.tasks import get_task
    from mallvi.sim_bridge.world import SimWorld
    from mallvi.tracing.trace import TraceWriter

    task = get_task(task_name)
    for seed in range(seed_start, seed_start + tries):
        seed_global_rngs(seed)
        world = SimWorld.create(task.scene_spec(), seed, render=True,
                                grasp_refusal_threshold_m=task.allocation_threshold_m)  # fmt: skip
        try:
            start = world.observe("head").rgb
            with tempfile.TemporaryDirectory() as tmp, TraceWriter(Path(tmp) / "trace") as trace:
                ExpertAgent(semantics="paper").run_episode(task, world, trace)
            if task.check_success(world):
                return start, world.observe("head").rgb, seed
        finally:
            world.close()
    return None


def main() -> None:
    from mallvi.bench.agents.single_paper_info import paper_data
    from mallvi.bench.tiers import PLANNING_TASKS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="all", help="'all' Tier 2 tasks or a comma-separated list")
    ap.add_argument("--seed-start", type=int, default=1250000)
    ap.add_argument("--tries", type=int, default=20, help="seeds to try per task until the expert solves one")
    args = ap.parse_args()
    names = list(PLANNING_TASKS) if args.tasks == "all" else args.tasks.split(",")
    data = paper_data()["tasks"]
    for name in names:
        got = render(name, args.seed_start, args.tries)
        if got is None:
            raise SystemExit(f"{name}: the expert solved none of {args.tries} seeds from {args.seed_start}")
        start, goal, seed = got
        img = slide(textwrap.shorten(data[name]["full_description"], 400), data[name]["template_example"], start, goal)
        path = OUT_DIR / f"example_{name}.png"
        img.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
        print(f"{path.relative_to(HERE)}: seed {seed}, {path.stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main()
