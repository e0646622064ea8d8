"""The errors an agent raises: a refused instruction, an agent without a usable answer, no strategy left."""

from __future__ import annotations


class RefusalError(ValueError):
    """The instruction cannot be carried out (unparsable, unknown object, impossible); nothing may move."""


class AgentError(RuntimeError):
    """An agent could not produce a usable answer (e.g. the model kept answering invalid JSON)."""


class OutOfReachError(AgentError):
    """A goal planner found no arm that reaches the object where it lies (others may bring it within reach)."""


class NoStrategyLeftError(AgentError):
    """The Thinker has no plan that differs from the subtask's failed attempts (graph/failure_memory.py)."""
