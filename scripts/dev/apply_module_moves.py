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

#: the second cut: one run path (orchestration), the twin, a folder per device and per job, the llm and the
#: rules backends in folders of their own, and no two modules of one name where a reader could confuse them
_SECOND_CUT: dict[str, str] = {
    "mallvi.graph.runner": "mallvi.graph.drive",
    "mallvi.graph.single_agent": "mallvi.graph.single_planner",
    "mallvi.graph.fault_budgets": "mallvi.orchestration.fault_budgets",
    "mallvi.graph.backends.base": "mallvi.graph.backends.backend_protocols",
    "mallvi.graph.backends.llm": "mallvi.graph.backends.llm.client",
    "mallvi.graph.backends.llm_agents": "mallvi.graph.backends.llm.agents",
    "mallvi.graph.backends.llm_decoding": "mallvi.graph.backends.llm.decoding",
    "mallvi.graph.backends.llm_endpoint": "mallvi.graph.backends.llm.endpoint",
    "mallvi.graph.backends.llm_errors": "mallvi.graph.backends.llm.errors",
    "mallvi.graph.backends.llm_images": "mallvi.graph.backends.llm.images",
    "mallvi.graph.backends.rules.plan_checks": "mallvi.graph.plan_checks",
    "mallvi.graph.backends.rules.grammar": "mallvi.graph.backends.rules.grammar.parser",
    "mallvi.graph.backends.rules.clauses": "mallvi.graph.backends.rules.grammar.clauses",
    "mallvi.graph.backends.rules.vocab": "mallvi.graph.backends.rules.grammar.vocab",
    "mallvi.graph.backends.rules.phrasing": "mallvi.graph.backends.rules.grammar.phrasing",
    "mallvi.graph.backends.rules.orders": "mallvi.graph.backends.rules.grammar.orders",
    "mallvi.graph.backends.rules.grammar_checks": "mallvi.graph.backends.rules.grammar.checks",
    "mallvi.graph.backends.rules.thinker": "mallvi.graph.backends.rules.thinker.thinker",
    "mallvi.graph.backends.rules.strategies": "mallvi.graph.backends.rules.thinker.strategies",
    "mallvi.graph.backends.rules.pull": "mallvi.graph.backends.rules.thinker.pull",
    "mallvi.graph.backends.rules.regrasp": "mallvi.graph.backends.rules.thinker.regrasp",
    "mallvi.bench.catalog": "mallvi.bench.task_scenes",
    "mallvi.bench.config": "mallvi.bench.bench_config",
    "mallvi.bench.agents.base": "mallvi.bench.agents.agent_protocols",
    "mallvi.bench.tasks.base": "mallvi.bench.tasks.task_base",
    "mallvi.logviz.catalog": "mallvi.logviz.run_index",
    "mallvi.logviz.components.scene_graph": "mallvi.logviz.components.scene_graph_view",
    "mallvi.perception.world_model": "mallvi.perception.perceived_world",
    "mallvi.perception.report": "mallvi.perception.frame_report",
    "mallvi.perception.raised": "mallvi.perception.raised_regions",
    "mallvi.perception.vocab": "mallvi.perception.query_words",
    "mallvi.sim_bridge.catalog": "mallvi.sim_bridge.scene_catalog",
    "mallvi.sim_bridge.station": "mallvi.sim_bridge.sim_station",
    "mallvi.sim_bridge.skills": "mallvi.sim_bridge.sim_skills",
    "mallvi.sim_bridge.ports": "mallvi.sim_bridge.skill_ports",
    "mallvi.robot_drivers.sim": "mallvi.sim_bridge.sim_devices",
    "mallvi.sim_bridge.twin_arm": "mallvi.twin.emulated_arm",
    "mallvi.sim_bridge.twin_arms": "mallvi.twin.arms",
    "mallvi.sim_bridge.twin_board": "mallvi.twin.board",
    "mallvi.sim_bridge.twin_calibration": "mallvi.twin.calibration_views",
    "mallvi.sim_bridge.twin_camera": "mallvi.twin.camera",
    "mallvi.sim_bridge.twin_clock": "mallvi.twin.clock",
    "mallvi.sim_bridge.twin_depth": "mallvi.twin.depth_noise",
    "mallvi.sim_bridge.twin_rig": "mallvi.twin.twin_rig",
    "mallvi.sim_bridge.twin_station": "mallvi.twin.twin_station",
    "mallvi.robot_drivers.config_piper": "mallvi.robot_drivers.piper.config_piper",
    "mallvi.robot_drivers.piper": "mallvi.robot_drivers.piper.piper",
    "mallvi.robot_drivers.piper_emulator": "mallvi.robot_drivers.piper.piper_emulator",
    "mallvi.robot_drivers.piper_ik": "mallvi.robot_drivers.piper.piper_ik",
    "mallvi.robot_drivers.piper_kinematics": "mallvi.robot_drivers.piper.piper_kinematics",
    "mallvi.robot_drivers.piper_reach": "mallvi.robot_drivers.piper.piper_reach",
    "mallvi.robot_drivers.piper_units": "mallvi.robot_drivers.piper.piper_units",
    "mallvi.robot_drivers.realsense": "mallvi.robot_drivers.realsense.realsense",
    "mallvi.robot_drivers.realsense_synthetic": "mallvi.robot_drivers.realsense.realsense_synthetic",
    "mallvi.robot_drivers.calibration": "mallvi.robot_drivers.calibration.eye_to_hand",
    "mallvi.robot_drivers.calibration_io": "mallvi.robot_drivers.calibration.calibration_files",
    "mallvi.robot_drivers.calibration_refine": "mallvi.robot_drivers.calibration.refine",
    "mallvi.robot_drivers.safety": "mallvi.robot_drivers.safety.guard",
    "mallvi.robot_drivers.cloud_collision": "mallvi.robot_drivers.safety.cloud_collision",
    "mallvi.robot_drivers.gripper_shape": "mallvi.robot_drivers.safety.gripper_shape",
    "mallvi.robot_drivers.skill_args": "mallvi.robot_drivers.safety.skill_args",
    "mallvi.robot_drivers.short_move": "mallvi.robot_drivers.motion.short_move",
    "mallvi.robot_drivers.pivot_grasp": "mallvi.robot_drivers.motion.pivot_grasp",
    "mallvi.robot_drivers.rig": "mallvi.robot_drivers.rig.rig",
    "mallvi.robot_drivers.rig_station": "mallvi.robot_drivers.rig.rig_station",
    "mallvi.robot_drivers.table_plane": "mallvi.robot_drivers.rig.table_plane",
    "mallvi.robot_drivers.rig_geometry": "mallvi.robot_drivers.rig_skills.rig_geometry",
    "mallvi.robot_drivers.rig_joint_moves": "mallvi.robot_drivers.rig_skills.rig_joint_moves",
    "mallvi.robot_drivers.rig_motion": "mallvi.robot_drivers.rig_skills.rig_motion",
    "mallvi.robot_drivers.rig_planner": "mallvi.robot_drivers.rig_skills.rig_planner",
    "mallvi.robot_drivers.rig_skills": "mallvi.robot_drivers.rig_skills.rig_skills",
    "mallvi.robot_drivers.rig_skills_config": "mallvi.robot_drivers.rig_skills.config_rig_skills",
    "mallvi.robot_drivers.rig_upright": "mallvi.robot_drivers.rig_skills.rig_upright",
    "mallvi.doctor": "mallvi.diagnostics",
}
_SECOND_CUT_PATHS: dict[str, str] = {
    "graph/runner.py": "graph/drive.py",
    "graph/single_agent.py": "graph/single_planner.py",
    "graph/fault_budgets.py": "orchestration/fault_budgets.py",
    "graph/backends/base.py": "graph/backends/backend_protocols.py",
    "graph/backends/llm.py": "graph/backends/llm/client.py",
    "graph/backends/llm_agents.py": "graph/backends/llm/agents.py",
    "graph/backends/llm_decoding.py": "graph/backends/llm/decoding.py",
    "graph/backends/llm_endpoint.py": "graph/backends/llm/endpoint.py",
    "graph/backends/llm_errors.py": "graph/backends/llm/errors.py",
    "graph/backends/llm_images.py": "graph/backends/llm/images.py",
    "graph/backends/rules/plan_checks.py": "graph/plan_checks.py",
    "graph/backends/rules/grammar.py": "graph/backends/rules/grammar/parser.py",
    "graph/backends/rules/clauses.py": "graph/backends/rules/grammar/clauses.py",
    "graph/backends/rules/vocab.py": "graph/backends/rules/grammar/vocab.py",
    "graph/backends/rules/phrasing.py": "graph/backends/rules/grammar/phrasing.py",
    "graph/backends/rules/orders.py": "graph/backends/rules/grammar/orders.py",
    "graph/backends/rules/grammar_checks.py": "graph/backends/rules/grammar/checks.py",
    "graph/backends/rules/thinker.py": "graph/backends/rules/thinker/thinker.py",
    "graph/backends/rules/strategies.py": "graph/backends/rules/thinker/strategies.py",
    "graph/backends/rules/pull.py": "graph/backends/rules/thinker/pull.py",
    "graph/backends/rules/regrasp.py": "graph/backends/rules/thinker/regrasp.py",
    "bench/catalog.py": "bench/task_scenes.py",
    "bench/config.py": "bench/bench_config.py",
    "bench/agents/base.py": "bench/agents/agent_protocols.py",
    "bench/tasks/base.py": "bench/tasks/task_base.py",
    "logviz/catalog.py": "logviz/run_index.py",
    "logviz/components/scene_graph.py": "logviz/components/scene_graph_view.py",
    "perception/world_model.py": "perception/perceived_world.py",
    "perception/report.py": "perception/frame_report.py",
    "perception/raised.py": "perception/raised_regions.py",
    "perception/vocab.py": "perception/query_words.py",
    "sim_bridge/catalog.py": "sim_bridge/scene_catalog.py",
    "sim_bridge/station.py": "sim_bridge/sim_station.py",
    "sim_bridge/skills.py": "sim_bridge/sim_skills.py",
    "sim_bridge/ports.py": "sim_bridge/skill_ports.py",
    "robot_drivers/sim.py": "sim_bridge/sim_devices.py",
    "sim_bridge/twin_arm.py": "twin/emulated_arm.py",
    "sim_bridge/twin_arms.py": "twin/arms.py",
    "sim_bridge/twin_board.py": "twin/board.py",
    "sim_bridge/twin_calibration.py": "twin/calibration_views.py",
    "sim_bridge/twin_camera.py": "twin/camera.py",
    "sim_bridge/twin_clock.py": "twin/clock.py",
    "sim_bridge/twin_depth.py": "twin/depth_noise.py",
    "sim_bridge/twin_rig.py": "twin/twin_rig.py",
    "sim_bridge/twin_station.py": "twin/twin_station.py",
    "robot_drivers/config_piper.py": "robot_drivers/piper/config_piper.py",
    "robot_drivers/piper.py": "robot_drivers/piper/piper.py",
    "robot_drivers/piper_emulator.py": "robot_drivers/piper/piper_emulator.py",
    "robot_drivers/piper_ik.py": "robot_drivers/piper/piper_ik.py",
    "robot_drivers/piper_kinematics.py": "robot_drivers/piper/piper_kinematics.py",
    "robot_drivers/piper_reach.py": "robot_drivers/piper/piper_reach.py",
    "robot_drivers/piper_units.py": "robot_drivers/piper/piper_units.py",
    "robot_drivers/realsense.py": "robot_drivers/realsense/realsense.py",
    "robot_drivers/realsense_synthetic.py": "robot_drivers/realsense/realsense_synthetic.py",
    "robot_drivers/calibration.py": "robot_drivers/calibration/eye_to_hand.py",
    "robot_drivers/calibration_io.py": "robot_drivers/calibration/calibration_files.py",
    "robot_drivers/calibration_refine.py": "robot_drivers/calibration/refine.py",
    "robot_drivers/safety.py": "robot_drivers/safety/guard.py",
    "robot_drivers/cloud_collision.py": "robot_drivers/safety/cloud_collision.py",
    "robot_drivers/gripper_shape.py": "robot_drivers/safety/gripper_shape.py",
    "robot_drivers/skill_args.py": "robot_drivers/safety/skill_args.py",
    "robot_drivers/short_move.py": "robot_drivers/motion/short_move.py",
    "robot_drivers/pivot_grasp.py": "robot_drivers/motion/pivot_grasp.py",
    "robot_drivers/rig.py": "robot_drivers/rig/rig.py",
    "robot_drivers/rig_station.py": "robot_drivers/rig/rig_station.py",
    "robot_drivers/table_plane.py": "robot_drivers/rig/table_plane.py",
    "robot_drivers/rig_geometry.py": "robot_drivers/rig_skills/rig_geometry.py",
    "robot_drivers/rig_joint_moves.py": "robot_drivers/rig_skills/rig_joint_moves.py",
    "robot_drivers/rig_motion.py": "robot_drivers/rig_skills/rig_motion.py",
    "robot_drivers/rig_planner.py": "robot_drivers/rig_skills/rig_planner.py",
    "robot_drivers/rig_skills.py": "robot_drivers/rig_skills/rig_skills.py",
    "robot_drivers/rig_skills_config.py": "robot_drivers/rig_skills/config_rig_skills.py",
    "robot_drivers/rig_upright.py": "robot_drivers/rig_skills/rig_upright.py",
    "doctor.py": "diagnostics.py",
}

#: whole modules (and packages) that moved; a key also matches its submodules, but never a module of the package
#: that took its place (``mallvi.robot_drivers.safety`` became the package holding ``safety.guard``)
MODULE_MOVES: dict[str, str] = {
    "mallvi.perception.observation": "mallvi.contracts.observation",
    "mallvi.logviz.trace": "mallvi.tracing.trace",
    "mallvi.logviz.capture": "mallvi.tracing.capture",
    "mallvi.logviz.summarize": "mallvi.tracing.summarize",
    "mallvi.sim_bridge.embodiment": "mallvi.robot_drivers.embodiment",
    **_SECOND_CUT,
}
#: modules of the packages that took a module's place, besides the moved ones (new modules)
_NEW_LEAVES = {"mallvi.robot_drivers.calibration": ("capture",),
               "mallvi.robot_drivers.realsense": ("config_realsense",),
               "mallvi.robot_drivers.rig": ("config_rig",)}

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
    "mallvi.robot_drivers.rig": ({"RigConfig": "mallvi.robot_drivers.rig.config_rig"}, True),
    "mallvi.graph.backends.base": ({n: "mallvi.graph.agent_errors" for n in ("RefusalError", "AgentError",
                                                                              "NoStrategyLeftError")}, True),
    "mallvi.graph.backends.backend_protocols": ({n: "mallvi.graph.agent_errors" for n in (
        "RefusalError", "AgentError", "NoStrategyLeftError")}, True),
    "mallvi.robot_drivers.realsense": ({"RealSenseConfig": "mallvi.robot_drivers.realsense.config_realsense"}, True),
}

#: file paths named in prose (docs, comments)
PATH_MOVES: dict[str, str] = {
    "perception/observation.py": "contracts/observation.py",
    "robot_drivers/base.py": "contracts/",
    "logviz/trace.py": "tracing/trace.py",
    "logviz/capture.py": "tracing/capture.py",
    "logviz/summarize.py": "tracing/summarize.py",
    "sim_bridge/embodiment": "robot_drivers/embodiment",
    **_SECOND_CUT_PATHS,
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
        text = re.sub(re.escape(old) + r"\b" + _not_its_package(old), new, text)
    for old, new in PATH_MOVES.items():
        text = re.sub(r"(?<![\w/])((?:mallvi/)?)" + re.escape(old), lambda m, n=new: m[1] + n, text)
    return text


def _not_its_package(old: str) -> str:
    """A lookahead that keeps ``old`` from matching a module of the package that took its place (idempotence)."""
    leaves = {t[len(old) + 1:].split(".")[0] for t in MODULE_MOVES.values() if t.startswith(old + ".")}
    leaves.update(_NEW_LEAVES.get(old, ()))
    if not leaves:
        return ""
    names = "|".join(sorted(leaves))
    return r"(?!\.(?:" + names + r")\b)(?![ \t]+import[ \t]+\(?\s*(?:" + names + r")\b)"


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
