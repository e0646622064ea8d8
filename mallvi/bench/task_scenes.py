"""The scene catalogue of ``mallvi run``: the simulator's built-in scenes plus every benchmark task's scene.

Each task's scene lives with its task here (tasks whose ``shared_scene`` is None build their own); a task brings
its success check, so ``mallvi run --task place_cans_plasticbox`` without an instruction is judged the way the
benchmark judges it. A task's scene comes on a plain table here (no distractors, textures or light colours:
``--randomization none``), so a free instruction names what is on it; ``mallvi bench`` runs the original's
randomisation. The catalogue is a new object each call; the shared scene registry is never changed.
"""

from __future__ import annotations

from mallvi.bench.tasks import TASKS
from mallvi.sim_bridge.scene_catalog import CatalogEntry, SceneCatalog, builtin_catalog


def scene_catalog() -> SceneCatalog:
    """Built-in scenes and every task's scene by name; a task's entry carries its success check."""
    base = builtin_catalog()
    entries = {name: base.get(name) for name in base.names()}
    for name, cls in TASKS.items():
        task = cls()
        entries[name] = CatalogEntry(task.scene_spec("none"), task.check_success)
    return SceneCatalog(entries)
