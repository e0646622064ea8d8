"""Write mallvi/bench/data/paper_prompts.json: the prompt texts the original BiManiBench evaluation sends its model.

The single agent's paper protocol quotes them word for word (they are facts of the benchmark the model must see):
the Tier 2 system prompt, the two output templates (``template``, ``template_vla``) and, per task, its
``full_description``, example reply and limits from ``description/task_instruction/<task>.json``.

    scripts/paper_prompts_from_source.py --git-dir /work/.mirror/bimanibench+BiManiBench/repo

reads commit 3a85fbb (or ``--rev``) of a clone of github.com/bimanibench/BiManiBench without checking it out.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
OUT = HERE / "mallvi" / "bench" / "data" / "paper_prompts.json"
#: our task name -> (the original's task json, tier)
TASKS: dict[str, tuple[str, str]] = {
    "place_cans_plasticbox": ("place_cans_plasticbox", "planning"),
    "blocks_cross_shape": ("blocks_cross_shape", "planning"),
    "blocks_ranking_size": ("blocks_ranking_size", "planning"),
    "blocks_ranking_rgb": ("blocks_ranking_rgb", "planning"),
    "stack_blocks_three": ("stack_blocks_three", "planning"),
    "stack_bowls_three": ("stack_bowls_three", "planning"),
    "handover_mic": ("handover_mic", "planning"),
    "handover_block": ("handover_block", "planning"),
    "hanging_mug": ("hanging_mug", "planning"),
    "place_burger_fries": ("place_burger_fries", "planning"),
    "place_object_basket": ("place_object_basket", "planning"),
    "place_bread_skillet": ("place_bread_skillet", "planning"),
    "blocks_tower": ("blocks_tower", "planning"),
    "put_bottles_dustbin": ("put_bottles_dustbin", "planning"),
    "place_object_scale": ("place_object_scale", "fine"),
    "place_burger_fries_ee": ("place_burger_fries", "fine"),
    "place_bread_skillet_ee": ("place_bread_skillet_vla", "fine"),
    "grab_roller": ("grab_roller", "fine"),
    "stack_blocks_two": ("stack_blocks_two", "fine"),
}
#: the evaluation scripts' defaults when a task json has no limit (myvlmEb_eval.py, myvlmEb_eval_vla.py)
DEFAULTS = {"planning": {"limit": 10, "chunk": 6}, "fine": {"limit": 8, "chunk": 6}}


def show(git_dir: str, rev: str, path: str) -> str:
    out = subprocess.run(["git", "--git-dir", git_dir, "show", f"{rev}:{path}"], check=True, capture_output=True)
    return out.stdout.decode("utf-8")


def string_constants(source: str) -> dict[str, str]:
    """Module-level ``NAME = '...'`` string assignments of a Python source, their values as Python reads them."""
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = node.value.value
    return out


def info_template(source: str, method: str) -> list[str | dict[str, str]]:
    """The text a task's info method returns, as literal pieces and one ``{"expr": source}`` per interpolated value
    (in order); the values are filled in from our scene at run time."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == method:
            returns = [n for n in ast.walk(node) if isinstance(n, ast.Return) and n.value is not None]
            if len(returns) != 1:
                raise ValueError(f"{method}: expected one return, found {len(returns)}")
            return _pieces(returns[0].value, source)
    raise ValueError(f"no method {method}")


def _pieces(value: ast.expr, source: str) -> list[str | dict[str, str]]:
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return [value.value]
    if isinstance(value, ast.JoinedStr):
        out: list[str | dict[str, str]] = []
        for part in value.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
            elif isinstance(part, ast.FormattedValue):
                if part.conversion != -1 or part.format_spec is not None:
                    raise ValueError("conversions and format specs are not expected in the info texts")
                out.append({"expr": ast.get_source_segment(source, part.value) or ""})
        return out
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return _pieces(value.left, source) + _pieces(value.right, source)
    raise ValueError(f"unexpected expression in an info text: {ast.dump(value)[:80]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--git-dir", required=True, help="a (bare) clone of bimanibench/BiManiBench")
    ap.add_argument("--rev", default="3a85fbb")
    args = ap.parse_args()
    planner = string_constants(show(args.git_dir, args.rev, "script/planner_utils.py"))
    system = string_constants(show(args.git_dir, args.rev, "script/systemPrompt.py"))
    tasks: dict[str, Any] = {}
    for ours, (theirs, tier) in TASKS.items():
        data = json.loads(show(args.git_dir, args.rev, f"description/task_instruction/{theirs}.json"))
        suffix = "_vla" if tier == "fine" else ""
        env = show(args.git_dir, args.rev, f"envs/{theirs}.py")
        tasks[ours] = {
            "source": theirs,
            "full_description": data["full_description"],
            "template_example": data[f"template_example{suffix}"],
            "action_limit": data.get(f"action_limit{suffix}", DEFAULTS[tier]["limit"]),
            "action_chunk_num": data.get(f"action_chunk_num{suffix}", DEFAULTS[tier]["chunk"]),
            "info": info_template(env, f"get_assistantInfo{suffix}"),
        }
    out = {
        "source": f"github.com/bimanibench/BiManiBench@{args.rev}",
        "system_prompt": system["system_prompt"],
        "template": planner["template"],
        "template_vla": planner["template_vla"],
        "tasks": tasks,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(HERE)}: {len(tasks)} tasks")


if __name__ == "__main__":
    main()
