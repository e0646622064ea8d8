"""Descriptor node: a scan of the scene into the scene graph (visual memory); also the re-scan on repeated failure."""

from __future__ import annotations

import contextlib
from typing import Any

from langgraph.runtime import Runtime

from mallvi.graph.agent_errors import AgentError
from mallvi.graph.backends.backend_protocols import MODEL_FAILURE, CallLog
from mallvi.graph.context import GraphContext
from mallvi.graph.in_hand import held_at, holding_arm, in_hand
from mallvi.graph.scene_memory import found_from_above, reconcile, recover_from_view, settled_at_scan
from mallvi.graph.schemas import SceneMemory, SceneObject
from mallvi.graph.second_look import clear_view, look_from_above, look_spots
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
    image_ids = [image_id]
    if previous is not None:  # a re-scan: keep the ids the plan is bound to, and objects now covered by others
        scene = _merged(previous, scene, ctx, _last_known_xyz(state, ctx))
        scene = _with_held(state, previous, scene, ctx)
        err = state["stage_error"]
        if err is not None and err.lost:
            scene, image_id = _second_look(state, previous, scene, image_id, image_ids, ctx, log)
    scene = scene.model_copy(update={
        "image_id": image_id,
        "scan_count": (previous.scan_count + 1) if previous else 1,
        "initial": previous.initial if previous and previous.initial else list(scene.objects),
    })
    update: dict[str, Any] = {"scene": scene, "llm_calls": log.records, "image_ids": image_ids}
    if previous is not None:  # a re-scan: the subtask starts over from the Perceptor
        # ... from where the re-scan sees each object: the Grounder tells alike objects apart by where each was
        # last localised, and a relayed bottle, last localised where it stood, was taken for another
        update["localized"] = settled_at_scan(state["localized"], scene)
        idx = str(state["subtask_index"])
        update["rescans"] = {**state["rescans"], idx: state["rescans"].get(idx, 0) + 1}
        update["retry_from"] = "perceptor"
    return update


def _second_look(state: GraphState, previous: SceneMemory, scene: SceneMemory, image_id: str, image_ids: list[str],
                 ctx: GraphContext, log: CallLog) -> tuple[SceneMemory, str]:
    """A re-scan for a lost object (``graph.second_look``): with the hands that hold something sent home, the
    scene is looked at again; an object the plan is bound to that is still missing is looked for from above
    through a wrist camera. Returns the scene and the id of the main camera's picture it comes from; every
    picture's id is added to ``image_ids``."""
    if clear_view(ctx):  # the arms holding something went home, out of the cameras' way
        again = ctx.observe()
        again_id = ctx.artifacts.put("descriptor_scan", again.rgb, node="descriptor")
        image_ids.append(again_id)
        with contextlib.suppress(AgentError):  # nothing usable this time: the first look stands
            scene = _merged(previous, ctx.backends.descriptor.describe(again, ctx, previous, log), ctx,
                            _last_known_xyz(state, ctx))
            scene = _with_held(state, previous, scene, ctx)
            image_id = again_id
    wanted = _lost_bound(state, previous, scene)
    if not wanted or not ctx.wrist_views:
        return scene, image_id
    report = state["actor_report"]
    put = report.put_at() if report is not None else None
    points = ([(put[0], put[1])] if put is not None else []) + [(o.position_m[0], o.position_m[1]) for o in wanted]
    for view, frame in look_from_above(ctx, look_spots(points)):
        image_ids.append(ctx.artifacts.put(f"descriptor_{view}", frame.rgb, node="descriptor"))
        found = found_from_above(wanted, ctx.perception.scan(frame), view)
        scene = scene.model_copy(update={"objects": [*scene.objects, *found]})
        wanted = [w for w in wanted if w.id not in {f.id for f in found}]
        if not wanted:
            break
    return scene, image_id


def _lost_bound(state: GraphState, previous: SceneMemory, scene: SceneMemory) -> list[SceneObject]:
    """The objects the plan is bound to that ``scene`` lacks, each as last known (where the graph last localised
    it, else the earlier scans saw it)."""
    here = {o.id for o in scene.objects}
    out = []
    for oid in dict.fromkeys(state["bindings"].values()):
        if oid in here:
            continue
        last = state["localized"].get(oid) or previous.get(oid) or next(
            (o for o in previous.initial if o.id == oid), None)
        if last is not None:
            out.append(last)
    return out


def _last_known_xyz(state: GraphState, ctx: GraphContext) -> dict[str, tuple[float, float, float]]:
    """Where the graph last knew each localised object: at the hand that holds it, else where it was localised."""
    return {oid: held_at(state, ctx, oid) or o.position_m for oid, o in state["localized"].items()}


def _with_held(state: GraphState, previous: SceneMemory, scene: SceneMemory, ctx: GraphContext) -> SceneMemory:
    """The scene with each object the plan is bound to that a hand holds and the re-scan did not see (held up out
    of view, or hidden by the fingers) kept, at the hand (``in_hand``)."""
    here = {o.id for o in scene.objects}
    kept = []
    for oid in dict.fromkeys(state["bindings"].values()):
        last = state["localized"].get(oid) or previous.get(oid)
        if oid in here or last is None or (arm := holding_arm(state, ctx, oid)) is None:
            continue
        kept.append(in_hand(last, arm, ctx))
    return scene.model_copy(update={"objects": [*scene.objects, *kept]}) if kept else scene


def _merged(previous: SceneMemory, scene: SceneMemory, ctx: GraphContext,
            known_xyz: dict[str, tuple[float, float, float]]) -> SceneMemory:
    """A re-scan's scene with the ids the plan is bound to kept, objects now covered by others kept, and the
    objects the main camera lost looked for in the other views."""
    objects, relations = reconcile(previous.objects, scene.objects, scene.relations, known_xyz)
    for name, view in ctx.extra_views.items():
        if not {p.id for p in previous.objects} - {o.id for o in objects}:
            break
        objects = recover_from_view(previous.objects, objects, ctx.perception.scan(view()), name)
    return scene.model_copy(update={"objects": objects, "relations": relations})

