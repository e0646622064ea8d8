"""Grounder node: detect the focus objects in a fresh image; a missing detection is reported, never invented."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from mallvi.contracts.observation import Observation
from mallvi.graph.agent_errors import AgentError
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.context import GraphContext
from mallvi.graph.in_hand import held_at, holding_arm
from mallvi.graph.nodes.common import attempt_of, current_subtask
from mallvi.graph.scene_memory import is_remembered
from mallvi.graph.schemas import Detection2D, SceneMemory, StageError
from mallvi.graph.state import GraphState
from mallvi.perception.projection import project


def grounder(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    ctx = runtime.context
    log = CallLog()
    scene = state["scene"]
    assert scene is not None
    obs = ctx.observe()
    image_id = ctx.artifacts.put("grounder", obs.rgb, node="grounder")
    queries = {}
    for oid in state["focus"]:
        o = scene.get(oid)
        queries[oid] = " ".join(w for w in ((o.color if o else None), (o.label if o else oid)) if w)
    last = {oid: o.position_m for oid, o in state["localized"].items()}
    # an object a hand holds is where the hand is, not where it was last localised (alike bottles: the held one,
    # looked for where it stood, was taken for one already in the bin)
    at_hand = {oid: xyz for oid in state["focus"] if (xyz := held_at(state, ctx, oid)) is not None}
    last.update(at_hand)
    candidates = near_the_hand(nearest_first(ctx.perception.detect(obs, queries), scene, obs, last), obs, at_hand)
    try:
        chosen = ctx.backends.grounder.choose(current_subtask(state), state["focus"], scene, candidates,
                                              attempt_of(state), log)
    except AgentError as e:
        return {"stage_error": StageError(agent="grounder", message=str(e)), "llm_calls": log.records,
                "image_ids": [image_id]}
    # an object hidden under another one (scene memory) is not expected in the image; the Projector uses memory
    # ... nor one a hand holds (it may be hidden between the fingers; the Projector puts it at the hand)
    missing = [oid for oid in state["focus"] if oid not in chosen and not is_remembered(scene.get(oid))
               and holding_arm(state, ctx, oid) is None]
    image_ids = [image_id]
    for name, view in ctx.extra_views.items():  # what the main camera does not see, looked for in the others
        if not missing:
            break
        obs_view = view()
        image_ids.append(ctx.artifacts.put(f"grounder_{name}", obs_view.rgb, node="grounder"))
        found = nearest_first(ctx.perception.detect(obs_view, {oid: queries[oid] for oid in missing}), scene, obs_view,
                              last)
        try:
            more = ctx.backends.grounder.choose(current_subtask(state), missing, scene, found, attempt_of(state), log)
        except AgentError:
            more = {}
        chosen.update({oid: d.model_copy(update={"view": name}) for oid, d in more.items() if oid in missing})
        missing = [oid for oid in missing if oid not in chosen]
    update: dict[str, Any] = {"detections": chosen, "llm_calls": log.records, "image_ids": image_ids}
    if missing:
        update["stage_error"] = StageError(agent="grounder", message=f"not detected: {', '.join(missing)}",
                                             lost=True)
    return update


HELD_SEEN_WITHIN_M = 0.12  # a held object's detection lies this close to the hand's grasp centre (its centre, in 3D)


def near_the_hand(candidates: dict[str, list[Detection2D]], obs: Observation,
                  at_hand: dict[str, tuple[float, float, float]]) -> dict[str, list[Detection2D]]:
    """Each held object's candidates (``at_hand``: its grasp centre) cut to those whose box centre is within
    ``HELD_SEEN_WITHIN_M`` of the hand in the image: a held object the fingers or the view hide is not taken for an
    alike object elsewhere; it is then localised at the hand."""
    out = dict(candidates)
    for oid, centre in at_hand.items():
        ring = np.array([centre] * 4, dtype=np.float64)
        ring[1:] += HELD_SEEN_WITHIN_M * np.eye(3)  # the centre and a point that far along each axis
        uv, z = project(ring, obs.K, obs.T_world_cam)
        if oid not in out or bool(np.any(z <= 0)):
            continue
        radius_px = max(math.dist(uv[0], p) for p in uv[1:])
        out[oid] = [d for d in out[oid] if math.dist(((d.box_xyxy[0] + d.box_xyxy[2]) / 2,
                                                       (d.box_xyxy[1] + d.box_xyxy[3]) / 2), uv[0]) <= radius_px]
    return out


def nearest_first(candidates: dict[str, list[Detection2D]], scene: SceneMemory, obs: Observation,
                  last: dict[str, tuple[float, float, float]] | None = None) -> dict[str, list[Detection2D]]:
    """Each object's candidates with the one nearest where it was last localised (else where the scene memory
    saw it) first, in the image: alike objects (two cans, three bottles) answer the same query, and where each
    was tells them apart."""
    out: dict[str, list[Detection2D]] = {}
    for oid, cands in candidates.items():
        known = (last or {}).get(oid) or (o.position_m if (o := scene.get(oid)) is not None else None)
        if known is None or len(cands) < 2:
            out[oid] = cands
            continue
        uv, z = project(np.array([known], dtype=float), obs.K, obs.T_world_cam)
        if float(z[0]) <= 0:
            out[oid] = cands
            continue
        u, v = float(uv[0, 0]), float(uv[0, 1])
        out[oid] = sorted(cands, key=lambda d: math.dist(((d.box_xyxy[0] + d.box_xyxy[2]) / 2,
                                                          (d.box_xyxy[1] + d.box_xyxy[3]) / 2), (u, v)))
    return out
