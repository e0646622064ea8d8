"""Descriptor node: a scan of the scene into the scene graph (visual memory); also the re-scan on repeated failure."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mallvi.graph.agent_errors import AgentError
from mallvi.graph.backends.backend_protocols import MODEL_FAILURE, CallLog
from mallvi.graph.context import GraphContext
from mallvi.graph.scene_memory import reconcile, recover_from_view
from mallvi.graph.state import GraphState


def descriptor(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    ctx = runtime.context
    log = CallLog()
    obs = ctx.observe()
    image_id = ctx.artifacts.put("descriptor_scan", obs.rgb, node="descriptor")
    previous = state["scene"]
    try:
        scene = ctx.backends.descriptor.describe(obs, ctx, previous, log)
    except AgentError as e:
        if previous is None:
            by_model = bool(log.records)  # a model was asked (else perception found nothing)
            return {"refusal": f"{MODEL_FAILURE if by_model else ''}the scene could not be described: {e}",
                    "refusal_cause": "model" if by_model else "input", "llm_calls": log.records,
                    "image_ids": [image_id]}
        return {"llm_calls": log.records, "image_ids": [image_id]}
    if previous is not None:  # a re-scan: keep the ids the plan is bound to, and objects now covered by others
        objects, relations = reconcile(previous.objects, scene.objects, scene.relations)
        for name, view in ctx.extra_views.items():  # objects the main camera lost, looked for in the other views
            if not {p.id for p in previous.objects} - {o.id for o in objects}:
                break
            objects = recover_from_view(previous.objects, objects, ctx.perception.scan(view()), name)
        scene = scene.model_copy(update={"objects": objects, "relations": relations})
    scene = scene.model_copy(update={
        "image_id": image_id,
        "scan_count": (previous.scan_count + 1) if previous else 1,
        "initial": previous.initial if previous and previous.initial else list(scene.objects),
    })
    update: dict[str, Any] = {"scene": scene, "llm_calls": log.records, "image_ids": [image_id]}
    if previous is not None:  # a re-scan: the subtask starts over from the Perceptor
        idx = str(state["subtask_index"])
        update["rescans"] = {**state["rescans"], idx: state["rescans"].get(idx, 0) + 1}
        update["retry_from"] = "perceptor"
    return update
