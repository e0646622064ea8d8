"""Rules Perceptor: the subtask's own objects, in the order object, target, rest of an arrangement."""

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
        return ids
