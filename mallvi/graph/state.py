"""The graph's state: plain, checkpointable data only (pydantic models, ids, numbers, lists).

Drivers, models, images and the trace writer never live here; they come through the runtime context
(context.py). Images are kept in the artifact store and referenced by id.
"""

from __future__ import annotations

import operator
from typing import Annotated, Literal, NotRequired, TypedDict

from mallvi.graph.failure_memory import FailedAttempt
from mallvi.graph.schemas import (
    ActionPlan,
    ActorReport,
    Detection2D,
    FailureReport,
    LlmCallRecord,
    NodeRecord,
    Plan,
    SceneMemory,
    SceneObject,
    StageError,
    Verdict,
)

RunStatus = Literal["running", "succeeded", "failed", "refused", "aborted"]


def join_refusals(old: str | None, new: str | None) -> str | None:
    """Reducer for ``refusal``: the Decomposer and the Descriptor run in parallel and may both refuse in the
    same step; keep both reasons instead of failing the step."""
    if not new or new == old:
        return old
    return f"{old}; {new}" if old else new


RefusalCause = Literal["input", "model"]
"""Why a run was refused: the instruction or scene (``input``: bad input) or the model endpoint (``model``)."""


def join_causes(old: RefusalCause | None, new: RefusalCause | None) -> RefusalCause | None:
    """Reducer for ``refusal_cause``: a model outage outranks a refusal of the input in the same step."""
    return "model" if "model" in (old, new) else (new or old)


class GraphState(TypedDict):
    """What flows between the agents.

    Every field but ``placed_at`` is set by ``initial_state``, so nodes read them as ``state["..."]``;
    ``placed_at`` appears with the first completed placement (and is missing from older checkpoints).
    ``subtask_index`` points into ``plan.subtasks``; ``attempts``/``rescans`` count per subtask index (as
    strings, so the state stays JSON-friendly); ``total_attempts`` is checked against the run's budget.
    """

    instruction: str
    plan: Plan | None
    refusal: Annotated[str | None, join_refusals]
    refusal_cause: Annotated[RefusalCause | None, join_causes]
    scene: SceneMemory | None
    bindings: dict[str, str]
    subtask_index: int
    attempts: dict[str, int]
    rescans: dict[str, int]
    total_attempts: int
    focus: list[str]
    detections: dict[str, Detection2D]
    localized: dict[str, SceneObject]
    action_plan: ActionPlan | None
    actor_report: ActorReport | None
    stage_error: StageError | None
    reflection: Verdict | None
    history: list[Verdict]
    failures: dict[str, list[FailedAttempt]]  # per subtask index: its failed attempts (graph/failure_memory.py)
    placed_at: NotRequired[dict[str, list[float]]]  # per completed subtask: where its object was put (re-checked)
    in_hand: NotRequired[dict[str, str]]  # the objects the attempts left in a hand, by the Actor's record: id -> arm
    retry_from: str | None
    status: RunStatus
    failure_report: FailureReport | None
    completed: Annotated[list[int], operator.add]
    llm_calls: Annotated[list[LlmCallRecord], operator.add]
    trail: Annotated[list[NodeRecord], operator.add]
    image_ids: Annotated[list[str], operator.add]


def initial_state(instruction: str) -> GraphState:
    """The state a run starts from."""
    return GraphState(
        instruction=instruction,
        plan=None,
        refusal=None,
        refusal_cause=None,
        scene=None,
        bindings={},
        subtask_index=0,
        attempts={},
        rescans={},
        total_attempts=0,
        focus=[],
        detections={},
        localized={},
        action_plan=None,
        actor_report=None,
        stage_error=None,
        reflection=None,
        history=[],
        failures={},
        retry_from=None,
        status="running",
        failure_report=None,
        completed=[],
        llm_calls=[],
        trail=[],
        image_ids=[],
    )
