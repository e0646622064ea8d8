"""Scene graphs found in a step's recorded state (data only; ``components.scene_graph_view`` draws them)."""

from __future__ import annotations

from typing import Any


def scene_graph_in(value: Any, depth: int = 3) -> dict[str, Any] | None:
    """A scene graph inside a node's inputs or outputs: a mapping with an ``objects`` list of mappings, some with
    ``position_m`` (e.g. the Descriptor's ``SceneMemory``), with its ``relations`` if any."""
    if depth < 0 or not isinstance(value, dict):
        return None
    objects = value.get("objects")
    if (
        isinstance(objects, list)
        and all(isinstance(o, dict) for o in objects)
        and any("position_m" in o for o in objects)
    ):
        relations = value.get("relations")
        return {"objects": objects, "relations": relations if isinstance(relations, list) else []}
    for child in value.values():
        found = scene_graph_in(child, depth - 1)
        if found is not None:
            return found
    return None
