"""Offline, deterministic backends: an instruction grammar, geometric reasoning, post-condition checks."""

from __future__ import annotations

from mallvi.graph.backends.backend_protocols import AgentBackends
from mallvi.graph.backends.rules.decomposer import RulesDecomposer
from mallvi.graph.backends.rules.descriptor import RulesDescriptor
from mallvi.graph.backends.rules.grounder import RulesGrounder
from mallvi.graph.backends.rules.perceptor import RulesPerceptor
from mallvi.graph.backends.rules.reflector import RulesReflector
from mallvi.graph.backends.rules.thinker.thinker import RulesThinker


def rules_backends() -> AgentBackends:
    """Every agent on the rules backend."""
    return AgentBackends(decomposer=RulesDecomposer(), descriptor=RulesDescriptor(), perceptor=RulesPerceptor(),
                         grounder=RulesGrounder(), thinker=RulesThinker(), reflector=RulesReflector())


__all__ = ["rules_backends"]
