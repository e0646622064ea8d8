"""Projector node (a tool): detections -> 3D object centres, extents and grasp targets in the world frame."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mallvi.graph.context import GraphContext
from mallvi.graph.schemas import SceneObject, StageError
from mallvi.graph.state import GraphState


def projector(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    ctx = runtime.context
    obs = ctx.observe()
    localized: dict[str, SceneObject] = {}
    failed: list[str] = []
    scene = state.get("scene")
    for oid, det in state.get("detections", {}).items():
        obj = ctx.perception.localize(obs, det)
        if obj is None:
            failed.append(oid)
            continue
        known = scene.get(oid) if scene else None
        localized[oid] = obj.model_copy(update={"id": oid, "color": obj.color or (known.color if known else None)})
    update: dict[str, Any] = {"localized": localized}
    if failed:
        update["stage_error"] = StageError(agent="projector", message=f"no usable depth for {', '.join(failed)}")
    return update
