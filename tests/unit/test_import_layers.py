"""mallvi's packages import downward only: the import-linter contracts in pyproject.toml hold, and an upward
import or an import circle makes them fail with the offending import named."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    """Run lint-imports on the package under ``root`` with ``root``'s pyproject.toml."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo", str(root / "pyproject.toml")],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)


def _copy_package(dst: Path) -> Path:
    shutil.copytree(ROOT / "mallvi", dst / "mallvi", ignore=shutil.ignore_patterns("__pycache__", "*.urdf", "*.srdf"))
    shutil.copy(ROOT / "pyproject.toml", dst / "pyproject.toml")
    return dst


def _append(path: Path, line: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")


def test_the_package_keeps_its_layer_contracts() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout and "downward only KEPT" in result.stdout


def test_an_upward_import_from_the_contracts_breaks_the_layers(tmp_path: Path) -> None:
    root = _copy_package(tmp_path)
    _append(root / "mallvi" / "contracts" / "geometry.py", "import mallvi.cli  # upward: contracts -> cli")
    result = _lint(root)
    assert result.returncode != 0
    assert "downward only BROKEN" in result.stdout
    assert "mallvi.contracts is not allowed to import mallvi.cli" in result.stdout
    assert "mallvi.contracts.geometry -> mallvi.cli" in result.stdout


def test_a_lazy_import_of_bench_inside_the_graph_counts(tmp_path: Path) -> None:
    root = _copy_package(tmp_path)
    _append(root / "mallvi" / "graph" / "drive.py",
            "def _late() -> object:\n    from mallvi.bench import task_scenes\n\n    return task_scenes")
    result = _lint(root)
    assert result.returncode != 0
    assert "mallvi.graph.drive -> mallvi.bench.task_scenes" in result.stdout


def test_the_twin_may_not_reach_into_the_graph_beside_it(tmp_path: Path) -> None:
    root = _copy_package(tmp_path)
    _append(root / "mallvi" / "twin" / "clock.py", "import mallvi.graph.drive  # sideways: twin -> graph")
    result = _lint(root)
    assert result.returncode != 0
    assert "mallvi.twin.clock -> mallvi.graph.drive" in result.stdout


def test_a_circle_between_two_modules_breaks_the_no_circles_contract(tmp_path: Path) -> None:
    root = _copy_package(tmp_path)
    _append(root / "mallvi" / "perception" / "query_words.py",
            "from mallvi.perception import fusion  # fusion imports query_words")
    result = _lint(root)
    assert result.returncode != 0
    assert "no import circles between the modules of a package BROKEN" in result.stdout
    assert "mallvi.perception" in result.stdout
