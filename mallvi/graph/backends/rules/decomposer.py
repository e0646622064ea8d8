"""Rules Decomposer: the instruction grammar."""

from __future__ import annotations

from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.rules.grammar.parser import parse_instruction
from mallvi.graph.schemas import Plan, SceneMemory


class RulesDecomposer:
    def decompose(self, instruction: str, scene: SceneMemory | None, log: CallLog) -> Plan:
        return parse_instruction(instruction)
