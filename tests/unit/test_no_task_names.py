"""Nothing under mallvi/graph or mallvi/perception branches on a task or a scene: no string in their source names
a benchmark task or a registered scene, and no code there reads a world's scene name. (The renamed-episode half
of this check, an episode that passes with its task and scene renamed, is in
tests/integration/test_graph_every_task.py.)"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mallvi.bench.tiers import FINE_TASKS, GROUNDING_TASKS, PLANNING_TASKS
from mallvi.sim_bridge.scenes import scene_names

ROOT = Path(__file__).resolve().parents[2] / "mallvi"
PACKAGES = ("graph", "perception")
TASK_AND_SCENE_NAMES = sorted({*PLANNING_TASKS, *FINE_TASKS, *GROUNDING_TASKS, *scene_names()})
#: attributes that hold a task's or a scene's name
NAME_ATTRIBUTES = ("scene_name", "task_name")


def _sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def test_the_names_to_look_for_are_there() -> None:
    assert len(TASK_AND_SCENE_NAMES) >= 22 and "put_bottles_dustbin" in TASK_AND_SCENE_NAMES
    assert len(_sources()) > 60


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_source_string_names_a_task_or_scene(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [(node.lineno, name) for name in TASK_AND_SCENE_NAMES if name in node.value]
        if isinstance(node, ast.Attribute) and node.attr in NAME_ATTRIBUTES:
            found.append((node.lineno, f".{node.attr}"))
    assert not found, f"{path.relative_to(ROOT)} names a task or scene: {found}"
