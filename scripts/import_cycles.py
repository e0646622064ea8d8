"""Print the import circles among mallvi's modules (every import counts: top level, in functions, TYPE_CHECKING).

    .venv/bin/python scripts/import_cycles.py                                   # the whole package
    .venv/bin/python scripts/import_cycles.py mallvi.sim_bridge mallvi.robot_drivers   # circles touching these

Exit code 1 when a circle is found. A circle is a strongly connected group of modules; each is printed with one
loop through it.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    """The mallvi modules ``path`` imports (``from a import b`` counts a.b when that is a module, else a)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                out.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {m for m in out if m in known and m != name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def loop_through(comp: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One import loop from the group's first module back to it (breadth-first)."""
    start, members = comp[0], set(comp)
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & members):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


def main(argv: list[str]) -> int:
    files = sorted((ROOT / "mallvi").rglob("*.py"))
    names = {module_name(f): f for f in files}
    known = set(names)
    graph = {n: imports_of(f, n, known) for n, f in names.items()}
    wanted = tuple(argv)
    found = [c for c in circles(graph) if not wanted or any(m.startswith(wanted) for m in c)]
    for comp in found:
        print(f"circle of {len(comp)}: " + " -> ".join(loop_through(comp, graph)))
    print(f"{len(found)} circle(s) among {len(names)} modules" + (f" touching {', '.join(wanted)}" if wanted else ""))
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
