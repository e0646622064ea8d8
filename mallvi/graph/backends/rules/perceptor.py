"""Rules Perceptor: the subtask's own objects, in the order object, target, rest of an arrangement; then what
the scene memory saw resting on the object or its target (it may have to be moved off first)."""

from __future__ import annotations

from mallvi.graph.agent_errors import AgentError
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.refs import refs_of
from mallvi.graph.schemas import SceneMemory, Subtask


class RulesPerceptor:
    def focus(self, subtask: Subtask, bindings: dict[str, str], scene: SceneMemory, log: CallLog) -> list[str]:
        ids: list[str] = []
        for ref in refs_of(subtask):
            if (subtask.relation == "at" and subtask.target is not None and ref.key() == subtask.target.key()
                    and ref.key() != subtask.obj.key()):
                continue  # a remembered location, not an object to find now
            if ref.key() not in bindings:
                raise AgentError(f"{ref.phrase!r} is not bound to a scene object")
            if bindings[ref.key()] not in ids:
                ids.append(bindings[ref.key()])
        own = ids[:2]
        for rel in scene.relations:
            if rel.relation == "on" and rel.args[1] in own and rel.args[0] not in ids and scene.get(rel.args[0]):
                ids.append(rel.args[0])
        return ids
