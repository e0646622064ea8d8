"""The original benchmark's leniency towards a model's actions, applied before they run.

It accepts: object names it can map to one scene object (``"red block"``, ``"the red one"``, per-task aliases such
as ``potato`` for the fries); place options nested in a ``kwargs`` object; arm tags in any case; poses and numbers
written as strings (``"[0.1, 0.2, 0.9]"``, ``"0.05"``); an ``action_name`` in any case. ``arm_tag: "both"`` for
back_to_origin and move_by_displacement is understood by the executor itself (``bench.actions``).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from typing import Any

from mallvi.bench.agents.single_info import resolve_actor

_POSE_KEYS = ("target_pose", "quat")


def _as_value(text: str) -> Any:
    """A JSON or Python literal written as a string; the string itself when it is neither."""
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(text)
        except (ValueError, SyntaxError):
            continue
    return text


def lenient_action(task: str, action: Any, objects: Mapping[str, Any] | Sequence[str]) -> Any:
    """``action`` with the original's leniency applied; anything it cannot make sense of is left as it was (the
    executor then reports it as a failed action)."""
    if not isinstance(action, Mapping):
        return action
    out = dict(action)
    if isinstance(out.get("action_name"), str):
        out["action_name"] = out["action_name"].strip().lower()
    params: Any = out.get("parameters", {})
    if isinstance(params, str):
        params = _as_value(params)
    if not isinstance(params, Mapping):
        return out
    p = dict(params)
    extra = p.pop("kwargs", None)
    if isinstance(extra, str):
        extra = _as_value(extra)
    if isinstance(extra, Mapping):
        p.update(extra)  # as the original: options inside kwargs override the outer ones
    elif extra is not None:
        p["kwargs"] = extra  # not an object: left for the executor to refuse
    if isinstance(p.get("arm_tag"), str):
        p["arm_tag"] = p["arm_tag"].strip().lower()
    for key in _POSE_KEYS:
        if isinstance(p.get(key), str):
            p[key] = _as_value(p[key])
    if isinstance(p.get("actor"), str):
        resolved = resolve_actor(task, p["actor"], objects)
        if resolved is not None:
            p["actor"] = resolved
    out["parameters"] = p
    return out
