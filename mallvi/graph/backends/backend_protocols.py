"""What each agent's backend must provide. ``rules`` and ``llm`` backends implement these; they can be mixed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from mallvi.contracts.observation import Observation
from mallvi.graph.ports import AgentContext
from mallvi.graph.schemas import (
    ActionPlan,
    ActorReport,
    Detection2D,
    FailedStep,
    LlmCallRecord,
    Plan,
    SceneMemory,
    SceneObject,
    Subtask,
    Verdict,
)

#: how a refusal caused by the model endpoint (down, or no usable answer) starts: not the instruction's fault
MODEL_FAILURE = "the model endpoint failed: "

if TYPE_CHECKING:
    from mallvi.graph.failure_memory import FailedAttempt


class CallLog:
    """Collects the LLM calls one node made, so the node can put them into the state."""

    def __init__(self) -> None:
        self.records: list[LlmCallRecord] = []


class DecomposerBackend(Protocol):
    def decompose(self, instruction: str, scene: SceneMemory | None, log: CallLog) -> Plan:
        """Raises RefusalError for an instruction that must not be executed."""
        ...


class DescriptorBackend(Protocol):
    def describe(self, obs: Observation, ctx: AgentContext, previous: SceneMemory | None, log: CallLog) -> SceneMemory:
        ...


class PerceptorBackend(Protocol):
    def focus(self, subtask: Subtask, bindings: dict[str, str], scene: SceneMemory, log: CallLog) -> list[str]:
        """The scene object ids the subtask involves (targets first)."""
        ...


class GrounderBackend(Protocol):
    def choose(
        self, subtask: Subtask, focus: list[str], scene: SceneMemory, candidates: dict[str, list[Detection2D]],
        attempt: int, log: CallLog,
    ) -> dict[str, Detection2D]:
        """One detection per focus object id; a missing one is left out (never invented)."""
        ...


class ThinkerBackend(Protocol):
    def think(
        self, subtask: Subtask, localized: dict[str, SceneObject], scene: SceneMemory, attempt: int,
        feedback: str | None, ctx: AgentContext, log: CallLog, failed: FailedStep | None = None,
        failures: Sequence[FailedAttempt] = (),
    ) -> ActionPlan:
        """The skill calls for ``subtask``; ``feedback`` is the last failure's explanation (for people and
        models), ``failed`` the skill call it failed at, with its kind (for code to route on), and ``failures``
        the subtask's failed attempts, none of which may be repeated unchanged (raise ``NoStrategyLeftError``
        when no different plan is left)."""
        ...


class ReflectorBackend(Protocol):
    def reflect(
        self, subtask: Subtask, report: ActorReport, before: dict[str, SceneObject], obs: Observation,
        ctx: AgentContext, log: CallLog,
    ) -> Verdict:
        ...


@dataclass
class AgentBackends:
    """One backend per agent (the Projector and the Actor are tools, not models)."""

    decomposer: DecomposerBackend
    descriptor: DescriptorBackend
    perceptor: PerceptorBackend
    grounder: GrounderBackend
    thinker: ThinkerBackend
    reflector: ReflectorBackend
