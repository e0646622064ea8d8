"""Rewrite imports and module paths in .py and .md files from mallvi's old package layout to the layered one.

Run it (or ``scripts/dev/apply_module_moves.sh``) on a branch that still uses the old layout before merging it:

    python scripts/dev/apply_module_moves.py mallvi tests scripts docs README.md

It is idempotent: a second run changes nothing. Every name imported from a split module is sent to the module
that now holds it; a name the table does not know stops the run with its file and line, and nothing is written.
In the agent backends (mallvi/graph/backends/) ``GraphContext`` becomes the narrow ``AgentContext`` protocol, and
in the contracts (mallvi/contracts/) ``SafetyGuard`` becomes its contract ``MotionGuard``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

#: whole modules (and packages) that moved; a key also matches its submodules
MODULE_MOVES: dict[str, str] = {
    "mallvi.perception.observation": "mallvi.contracts.observation",
    "mallvi.logviz.trace": "mallvi.tracing.trace",
    "mallvi.logviz.capture": "mallvi.tracing.capture",
    "mallvi.logviz.summarize": "mallvi.tracing.summarize",
    "mallvi.sim_bridge.embodiment": "mallvi.robot_drivers.embodiment",
}

#: modules whose names went to several new modules; None = the old module is gone (every name must be listed)
_BASE = {
    "ArmSide": "mallvi.contracts.geometry",
    "ARM_SIDES": "mallvi.contracts.geometry",
    "parse_arm": "mallvi.contracts.geometry",
    "Pose": "mallvi.contracts.geometry",
    "QUAT_NORM_TOL": "mallvi.contracts.geometry",
    "quat_problem": "mallvi.contracts.geometry",
    "DriverError": "mallvi.contracts.errors",
    "DeviceNotConnectedError": "mallvi.contracts.errors",
    "StaleFrameError": "mallvi.contracts.errors",
    "UnknownObjectError": "mallvi.contracts.errors",
    "FailureKind": "mallvi.contracts.skills",
    "Failure": "mallvi.contracts.skills",
    "parse_pose_list": "mallvi.contracts.skills",
    "SkillResult": "mallvi.contracts.skills",
    "SkillAPI": "mallvi.contracts.skills",
    "ObjectInfo": "mallvi.contracts.world_model",
    "WorldModel": "mallvi.contracts.world_model",
    "Arm": "mallvi.contracts.devices",
    "Camera": "mallvi.contracts.devices",
    "DualArm": "mallvi.contracts.devices",
}
NAME_MOVES: dict[str, tuple[dict[str, str], bool]] = {
    # old module: (name -> new module, whether the old module still exists for the names not listed)
    "mallvi.robot_drivers.base": (_BASE, False),
    "mallvi.graph.context": ({"Budgets": "mallvi.config", "PerceptionPort": "mallvi.graph.ports"}, True),
    "mallvi.graph.nodes.common": ({"refs_of": "mallvi.graph.refs", "plan_refs": "mallvi.graph.refs"}, True),
    "mallvi.graph.binding": ({"candidates_of": "mallvi.graph.refs"}, True),
    "mallvi.perception.segmentation": ({"SamSegmenter": "mallvi.perception.neural.sam"}, True),
}

#: file paths named in prose (docs, comments)
PATH_MOVES: dict[str, str] = {
    "perception/observation.py": "contracts/observation.py",
    "robot_drivers/base.py": "contracts/",
    "logviz/trace.py": "tracing/trace.py",
    "logviz/capture.py": "tracing/capture.py",
    "logviz/summarize.py": "tracing/summarize.py",
    "sim_bridge/embodiment": "robot_drivers/embodiment",
}

_FROM_IMPORT = re.compile(
    r"^(?P<indent>[ \t]*)from[ \t]+(?P<mod>mallvi(?:\.\w+)*)[ \t]+import[ \t]+"
    r"(?:\((?P<paren>[^)]*)\)|(?P<plain>[^\n#]*?(?:\\\n[^\n#]*?)*))(?P<tail>[ \t]*(?:#[^\n]*)?)$",
    re.MULTILINE,
)
LINE_LIMIT = 120
#: a file containing this text is left as it is
SKIP_MARK = "apply_module_moves: " + "skip"


class UnknownNameError(ValueError):
    """A name imported from a split module that the move table does not place."""


def _names(text: str) -> list[str]:
    text = re.sub(r"#[^\n]*", "", text).replace("\\\n", " ")
    return [" ".join(n.split()) for n in text.split(",") if n.strip()]


def _format(indent: str, module: str, names: list[str], tail: str = "") -> str:
    one = f"{indent}from {module} import {', '.join(names)}{tail}"
    if len(one) <= LINE_LIMIT:
        return one
    inner = "".join(f"{indent}    {n},\n" for n in names)
    return f"{indent}from {module} import ({tail}\n{inner}{indent})"


def _split_from_import(m: re.Match[str], where: str) -> str:
    mod, indent, tail = m["mod"], m["indent"], m["tail"] or ""
    names = _names(m["paren"] if m["paren"] is not None else m["plain"])
    if mod in NAME_MOVES:
        table, old_kept = NAME_MOVES[mod]
        groups: dict[str, list[str]] = {}
        for n in names:
            base = n.split(" as ")[0].strip()
            target = table.get(base)
            if target is None:
                if not old_kept:
                    raise UnknownNameError(f"{where}: {base!r} from {mod} has no new module in the move table")
                target = mod
            groups.setdefault(target, []).append(n)
        if list(groups) == [mod]:
            return m.group(0)
        return "\n".join(_format(indent, t, ns, tail if i == 0 else "") for i, (t, ns) in enumerate(groups.items()))
    # "from mallvi.logviz import trace": a moved module imported from its package
    moved = {n: MODULE_MOVES.get(f"{mod}.{n.split(' as ')[0].strip()}") for n in names}
    if not any(moved.values()):
        return m.group(0)
    groups = {}
    for n, target in moved.items():
        if target is None:
            groups.setdefault(mod, []).append(n)
        else:
            parent, _, leaf = target.rpartition(".")
            alias = n.split(" as ")[1].strip() if " as " in n else None
            groups.setdefault(parent, []).append(leaf if alias is None else f"{leaf} as {alias}")
    return "\n".join(_format(indent, t, ns, tail if i == 0 else "") for i, (t, ns) in enumerate(groups.items()))


def _dotted(text: str) -> str:
    for old, (table, old_kept) in NAME_MOVES.items():
        esc = re.escape(old)
        text = re.sub(esc + r"\.(\w+)\b", lambda m, t=table, o=old: f"{t.get(m[1], o)}.{m[1]}", text)
        if not old_kept:
            text = re.sub(esc + r"\b(?!\.)", "mallvi.contracts", text)
    for old, new in MODULE_MOVES.items():
        text = re.sub(re.escape(old) + r"\b", new, text)
    for old, new in PATH_MOVES.items():
        text = re.sub(r"(?<![\w/])((?:mallvi/)?)" + re.escape(old), lambda m, n=new: m[1] + n, text)
    return text


def rewrite(text: str, where: str = "<text>") -> str:
    """The text with every old import and module path replaced by the new one."""

    def line_of(pos: int) -> str:
        return f"{where}:{text.count(chr(10), 0, pos) + 1}"

    text = _FROM_IMPORT.sub(lambda m: _split_from_import(m, line_of(m.start())), text)
    if "mallvi/graph/backends/" in where.replace("\\", "/"):
        # the agent backends see the run through graph.ports.AgentContext, never graph.context (an import circle)
        text = text.replace("from mallvi.graph.context import GraphContext",
                            "from mallvi.graph.ports import AgentContext")
        text = re.sub(r"\bGraphContext\b", "AgentContext", text)
    if "mallvi/contracts/" in where.replace("\\", "/"):
        # a contract names the guard by its contract, never by robot_drivers' implementation (an upward import)
        text = text.replace("from mallvi.robot_drivers.safety import SafetyGuard",
                            "from mallvi.contracts.guard import MotionGuard")
        text = re.sub(r"\bSafetyGuard\b", "MotionGuard", text)
    return _dotted(text)


def iter_files(paths: Iterable[str]) -> Iterator[Path]:
    """The .py and .md files under ``paths``, skipping hidden folders and this script itself (its tables)."""
    me = Path(__file__).resolve()
    for p in map(Path, paths):
        files = sorted(p.rglob("*")) if p.is_dir() else [p]
        for f in files:
            hidden = any(x.startswith(".") and x not in (".", "..") for x in f.parts)
            if f.suffix in (".py", ".md") and f.is_file() and f.resolve() != me and not hidden:
                yield f


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help="files or folders (.py and .md files are rewritten)")
    parser.add_argument("--check", action="store_true", help="only list the files that would change; exit 1 if any")
    args = parser.parse_args(argv)
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        print(f"apply_module_moves: no such path: {', '.join(missing)}", file=sys.stderr)
        return 2
    changed: dict[Path, str] = {}
    try:
        for f in iter_files(args.paths):
            old = f.read_text(encoding="utf-8")
            if SKIP_MARK in old:  # e.g. docs/architecture.md, whose table names the old modules on purpose
                continue
            new = rewrite(old, str(f))
            if new != old:
                changed[f] = new
    except UnknownNameError as e:
        print(f"apply_module_moves: {e}; nothing written", file=sys.stderr)
        return 2
    for f, new in changed.items():
        if not args.check:
            f.write_text(new, encoding="utf-8")
        print(f)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
