"""Rules Grounder: per object the best-scoring candidate of a fresh detection pass (of equal scores, the first:
the node lists them nearest where the scene memory saw the object first)."""

from __future__ import annotations

from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.schemas import Detection2D, SceneMemory, Subtask


class RulesGrounder:
    def choose(
        self, subtask: Subtask, focus: list[str], scene: SceneMemory, candidates: dict[str, list[Detection2D]],
        attempt: int, log: CallLog,
    ) -> dict[str, Detection2D]:
        chosen: dict[str, Detection2D] = {}
        for oid in focus:
            cands = sorted(candidates.get(oid, []), key=lambda d: -d.score)
            if cands:
                chosen[oid] = cands[0]
        return chosen
