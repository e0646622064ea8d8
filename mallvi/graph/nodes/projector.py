"""Projector node (a tool): detections -> 3D object centres, extents and grasp targets in the world frame.

A focus object the scene memory holds as hidden under another one is taken from memory (its last observation).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mallvi.contracts.observation import Observation
from mallvi.graph.context import GraphContext
from mallvi.graph.in_hand import holding_arm, in_hand
from mallvi.graph.scene_memory import is_remembered
from mallvi.graph.schemas import SceneObject, StageError
from mallvi.graph.state import GraphState


def projector(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    ctx = runtime.context
    views = {"": ctx.observe}
    views.update(ctx.extra_views)
    frames: dict[str, Observation] = {}
    localized: dict[str, SceneObject] = {}
    failed: list[str] = []
    scene = state["scene"]
    for oid, det in state["detections"].items():
        view = det.view if det.view in views else ""
        if view not in frames:
            frames[view] = views[view]()  # the camera the Grounder found it in
        obj = ctx.perception.localize(frames[view], det)
        if obj is None:
            failed.append(oid)
            continue
        known = scene.get(oid) if scene else None
        localized[oid] = obj.model_copy(update={"id": oid, "color": obj.color or (known.color if known else None)})
    for oid in state["focus"]:
        if oid in localized or oid in failed or (arm := holding_arm(state, ctx, oid)) is None:
            continue
        last = state["localized"].get(oid) or (scene.get(oid) if scene else None)
        if last is not None:
            localized[oid] = in_hand(last, arm, ctx)  # not seen in the image: where the hand holding it is
    for oid in state["focus"]:
        remembered = scene.get(oid) if scene else None
        if remembered is not None and oid not in localized and oid not in failed and is_remembered(remembered):
            localized[oid] = remembered  # hidden under another object: where the last scan that saw it put it
    update: dict[str, Any] = {"localized": localized}
    if failed:
        update["stage_error"] = StageError(agent="projector", message=f"no usable depth for {', '.join(failed)}")
    return update
