"""How a run is judged: by the Station's success oracle (simulator truth) where it has one, else the graph's belief.

The scene's own instruction is judged by its benchmark success check; a free instruction by the Decomposer's goal
predicates evaluated on the final scene, with object references resolved against the simulator's objects
independently of perception.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

from mallvi.contracts.geometry import ARM_SIDES
from mallvi.contracts.station import Station
from mallvi.contracts.world_model import WorldModel
from mallvi.graph.drive import GraphOutcome
from mallvi.graph.goals import PredicateResult, centre_of, evaluate, truth_boxes
from mallvi.graph.refs import plan_refs
from mallvi.graph.schemas import ObjectRef
from mallvi.graph.state import GraphState

log = logging.getLogger(__name__)

NOT_RUN = "not run"
GRAPH_BELIEF = "graph belief (no success oracle)"
#: a scene's own success check, called with the simulator's world
SuccessCheck = Callable[[Any], bool]


def judge(station: Station, instruction: str | None, success_check: SuccessCheck | None, state: GraphState,
          outcome: GraphOutcome) -> tuple[bool, str, list[PredicateResult]]:
    """(success, where the judgement comes from, predicate checks).

    ``instruction`` None means the scene's own instruction, judged by ``success_check`` when there is one.
    """
    oracle = station.oracle
    if outcome.status in ("refused", "paused", "planned"):
        return False, NOT_RUN, []
    if oracle is None:
        return outcome.graph_success, GRAPH_BELIEF, []
    if instruction is None:
        if success_check is not None:
            return oracle.check(success_check), "simulator: task success check", []
        log.info("this scene has no success check; using the goal predicates")
    plan = state["plan"]
    if plan is None or not plan.goal:
        return False, "simulator: no goal predicates", []
    refs = plan_refs(plan)
    boxes, errors = truth_boxes(refs, oracle.truth)
    names = {key: _truth_name(oracle.truth, ref) for key, ref in refs.items()}
    held_by_arm: dict[str, str | None] = {arm: oracle.held_object(arm) for arm in ARM_SIDES}

    def held(arm: str) -> str | None:
        name = held_by_arm.get(arm)
        return next((k for k, n in names.items() if n == name), None) if name else None

    checks = evaluate(plan.goal, boxes, station.table_top_z_m, held=held)
    for key, msg in errors.items():
        checks.append(PredicateResult(predicate=f"resolve({key})", holds=False, detail=msg))
    return all(c.holds for c in checks), "simulator: goal predicates", checks


def _truth_name(truth: WorldModel, ref: ObjectRef) -> str | None:
    """The simulator's name of the object ``ref`` resolves to (nearest centre), None when it resolves to none."""
    boxes, _ = truth_boxes({"x": ref}, truth)
    if "x" not in boxes:
        return None
    c = boxes["x"].centre_m
    return min(truth.object_names(), key=lambda n: math.dist(centre_of(truth.get_object(n)), c))
