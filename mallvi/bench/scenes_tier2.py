"""The benchmark scenes that live with their tasks here, made available to the shared scene registry.

``register_bench_scenes()`` adds each task's own scene (tasks whose ``shared_scene`` is None) to
``mallvi.sim_bridge.scenes`` under the task's name, so ``mallvi run --task place_cans_plasticbox`` can build
it. It is explicit (no import side effect) and idempotent.
"""

from __future__ import annotations

from mallvi.bench.tasks import TASKS


def register_bench_scenes() -> list[str]:
    """Register every bench-owned scene not yet in the shared registry; returns the names added."""
    from mallvi.sim_bridge import scenes

    added = []
    for name, cls in TASKS.items():
        task = cls()
        if task.shared_scene is not None or name in scenes.scene_names():
            continue
        scenes.register_scene(task.scene_spec())
        added.append(name)
    return added
