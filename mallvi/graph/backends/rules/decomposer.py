"""Rules Decomposer: the instruction grammar."""

from __future__ import annotations

from mallvi.graph.backends.base import CallLog
from mallvi.graph.backends.rules.grammar import parse_instruction
from mallvi.graph.schemas import Plan, SceneMemory


class RulesDecomposer:
    def decompose(self, instruction: str, scene: SceneMemory | None, log: CallLog) -> Plan:
        return parse_instruction(instruction)
