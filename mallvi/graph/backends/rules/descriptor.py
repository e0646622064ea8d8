"""Rules Descriptor: perception's scan of the scene plus pairwise spatial relations (the scene graph)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mallvi.contracts.observation import Observation
from mallvi.graph.agent_errors import AgentError
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.goals import Box, relation_holds
from mallvi.graph.ports import AgentContext
from mallvi.graph.schemas import Predicate, SceneMemory, SceneObject

if TYPE_CHECKING:
    from mallvi.graph.ports import AgentContext

_PAIR_RELATIONS = ("on", "in", "left_of", "right_of", "near")


def relations_of(objects: list[SceneObject], table_top_z: float) -> list[Predicate]:
    rels: list[Predicate] = []
    for a in objects:
        for b in objects:
            if a.id == b.id:
                continue
            for r in _PAIR_RELATIONS:
                if relation_holds(r, Box.of_scene(a), Box.of_scene(b), table_top_z)[0]:
                    rels.append(Predicate(relation=r, args=[a.id, b.id]))  # type: ignore[arg-type]
    return rels


class RulesDescriptor:
    def describe(self, obs: Observation, ctx: AgentContext, previous: SceneMemory | None, log: CallLog) -> SceneMemory:
        objects = ctx.perception.scan(obs)
        if not objects:
            raise AgentError("perception found no objects in the scene")
        return SceneMemory(objects=objects, relations=relations_of(objects, ctx.table_top_z))
