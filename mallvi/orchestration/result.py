"""``RunResult``: the outcome of one run of the graph on a Station (``mallvi run --json`` prints it)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from mallvi.graph.goals import PredicateResult

#: the graph's end states after which the run's own status is its judged outcome
FINISHED_GRAPH_STATUSES = ("succeeded", "failed")


def run_status(graph_status: str, success: bool) -> str:
    """The run's status: ``succeeded`` or ``failed`` as the run was judged once the graph finished (a graph
    that believes it succeeded, unchecked by a Reflector, may have failed), else the graph's own end state
    (``refused``, ``paused``, ``planned``, ``aborted``)."""
    if graph_status in FINISHED_GRAPH_STATUSES:
        return "succeeded" if success else "failed"
    return graph_status


class RunResult(BaseModel):
    """The outcome of one run: what was asked, where, what the graph did and how it was judged.

    ``status`` is the run's (``run_status``): it never says ``succeeded`` beside ``success: false``;
    ``graph_status`` is where the graph itself ended (``succeeded`` when it went through every subtask).
    """

    instruction: str
    task: str
    seed: int
    success: bool
    success_source: str
    graph_success: bool
    status: str
    graph_status: str = Field(default="", description="where the graph itself ended (its own belief)")
    goal: list[str] = Field(default_factory=list)
    goal_check: list[PredicateResult] = Field(default_factory=list)
    subtasks: list[str] = Field(default_factory=list)
    attempts: dict[str, int] = Field(default_factory=dict)
    llm_calls: dict[str, Any] = Field(default_factory=dict)
    wall_s: float
    graph_s: float
    node_time_s: float
    transitions: int
    actor_steps: int = Field(default=0, description="how many times the Actor ran (each runs one action plan)")
    trace: str | None = None
    failure_report: dict[str, Any] | None = None
    refusal: str | None = None
    refusal_cause: str | None = Field(default=None, description='"input" (bad input) or "model" (the endpoint)')
    thread_id: str | None = None
    planned_calls: list[dict[str, Any]] = Field(default_factory=list, description="dry run: the first skill calls")
    faults_injected: int = 0
    station: str = ""
    privileged: list[str] = Field(default_factory=list, description="the Station's inputs a rig would not have")

    @property
    def exit_code(self) -> int:
        """The command's exit code (as ``mallvi.cli.common`` numbers them): 2 refused, 4 paused, 0 succeeded or
        planned (a dry run), else 1."""
        if self.status == "refused":
            return 2
        if self.status == "paused":
            return 4
        return 0 if self.success or self.status == "planned" else 1
