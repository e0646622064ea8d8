"""The scenes a run may name, each with the check of its own instruction's success (simulator truth).

A catalogue is composed where the packages meet: ``mallvi run`` joins the built-in scenes here with the benchmark's
task scenes and their success checks (``mallvi.bench.task_scenes``) and passes the catalogue down to the run. Nothing
registers scenes at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mallvi.sim_bridge.scene_spec import SceneSpec
from mallvi.sim_bridge.scenes import UnknownSceneError, get_scene, scene_names
from mallvi.sim_bridge.world import SimWorld

#: whether the scene's own instruction has been carried out, read from simulator truth
SuccessCheck = Callable[[SimWorld], bool]


@dataclass(frozen=True)
class CatalogEntry:
    """One scene and, when its instruction has a success check, that check."""

    spec: SceneSpec
    success: SuccessCheck | None = None


class SceneCatalog:
    """Scenes by name (read-only)."""

    def __init__(self, entries: Mapping[str, CatalogEntry]) -> None:
        self._entries = dict(entries)

    def get(self, name: str) -> CatalogEntry:
        """The entry called ``name``; UnknownSceneError (a KeyError) lists the known names."""
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise UnknownSceneError(f"unknown scene {name!r}; known scenes: {known}") from None

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries


def builtin_catalog() -> SceneCatalog:
    """The built-in scenes of ``mallvi.sim_bridge.scenes``, without success checks."""
    return SceneCatalog({name: CatalogEntry(get_scene(name)) for name in scene_names()})
