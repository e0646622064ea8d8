"""Why an episode failed, in words: a category and a reason per failed episode, and the leading reasons of a task.

The categories, in the order they are checked:

- ``error``: the episode ended with an exception (``status: error``), not the model's fault.
- ``model failure``: the model gave no usable answer: the endpoint failed, every reply was unparsable, Tier 1 got
  no parsable answer.
- ``refused before moving``: the agent refused or gave up before its first action (an ambiguous instruction, a
  model that cannot see the image, no plan found); the reason is its refusal or failure report.
- ``object off the table``: after the agent had moved, an object of the task lies well below the table top (by
  simulator truth, ``final_xyz``): a fault or a drop threw it to the floor, and no agent could have finished.
- ``motion failure``: an action failed (the arm-allocation check refused a grasp, no motion plan, a missed grasp),
  or the agent's own failure report after it had moved.
- ``wrong answer``: Tier 1: a block got the wrong arm or none.
- ``condition missed``: everything ran, but the task's success conditions did not all hold.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

CATEGORIES = ("refused before moving", "model failure", "object off the table", "motion failure", "wrong answer",
              "condition missed", "error")
#: how many reasons are shown per task
TOP_REASONS = 3
#: a reason is cut to this many characters
REASON_CHARS = 200
#: the text that marks a refusal caused by the model endpoint (graph: ``nodes.decomposer.MODEL_FAILURE``)
_MODEL_FAILED = ("the model endpoint failed", "the model call failed")
_KEY_SHAPED = re.compile(r"(?i)(sk-[A-Za-z0-9_\-*]{6,}|bearer\s+[A-Za-z0-9_\-.~+/=*]{6,})")


def in_words(text: Any, secrets: Iterable[str] = ()) -> str:
    """Text from a record made fit for a report: no control or format characters (bidi overrides included), no
    key-shaped strings or ``secrets``, whitespace collapsed, at most ``REASON_CHARS`` characters."""
    out = str(text)
    for s in secrets:
        if s and len(s) >= 4:
            out = out.replace(s, "***")
    out = _KEY_SHAPED.sub("***", out)
    out = "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in out)
    out = " ".join(out.split())
    return out if len(out) <= REASON_CHARS else out[: REASON_CHARS - 1] + "…"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _missed(record: Mapping[str, Any]) -> list[str]:
    conditions = record.get("conditions")
    if not isinstance(conditions, list):
        return []
    return [str(c.get("name")) for c in conditions if isinstance(c, Mapping) and not c.get("held")]


#: an object this far below the table top has left the table
OFF_TABLE_M = 0.10


def off_table(record: Mapping[str, Any]) -> list[str]:
    """The task's objects (not the clutter) that ended well below the table top, by simulator truth."""
    final = _mapping(record.get("final_xyz"))
    table_z = _mapping(record.get("randomization")).get("table_top_z_m")
    if not isinstance(table_z, (int, float)):
        return []
    return [n for n, xyz in final.items() if not n.startswith("clutter_") and isinstance(xyz, list) and len(xyz) == 3
            and isinstance(xyz[2], (int, float)) and xyz[2] < table_z - OFF_TABLE_M]


def _grounding(record: Mapping[str, Any]) -> tuple[str, str]:
    answers = record.get("answers")
    if not isinstance(answers, Mapping):
        return "model failure", "no parsable answer"
    truth = _mapping(record.get("truth"))
    wrong = [b for b, a in answers.items() if a is not None and truth.get(b) not in (None, a)]
    unanswered = [b for b, a in answers.items() if a is None]
    if wrong:
        return "wrong answer", "the wrong arm for a block"
    if unanswered:
        return "wrong answer", "no arm for a block (not found or not answered)"
    return "wrong answer", "not every block was answered right"


def categorize(record: Mapping[str, Any], secrets: Iterable[str] = ()) -> tuple[str, str]:
    """(category, reason in words) of a failed episode record (see the module's docstring for the categories)."""
    message = str(record.get("message") or "")
    status = record.get("status")
    if status == "error":
        cat = "model failure" if any(m in message for m in _MODEL_FAILED) else "error"
        return cat, in_words(message or "an exception", secrets)
    if record.get("tier") == "grounding" or "answers" in record:
        return _grounding(record)
    actions = _int(record.get("actions"))
    report = _mapping(record.get("failure_report")) or None
    refused = record.get("graph_status") == "refused" or record.get("refusal_cause") is not None
    calls = _mapping(record.get("llm_calls"))
    if actions == 0:
        if record.get("refusal_cause") == "model" or any(message.startswith(m) for m in _MODEL_FAILED):
            return "model failure", in_words(message, secrets)
        if refused:
            return "refused before moving", in_words(message or "refused", secrets)
        if _int(record.get("parse_errors")):
            return "model failure", "the model's replies held no usable plan"
        if _int(calls.get("calls")) and _int(calls.get("failed")) == _int(calls.get("calls")):
            return "model failure", "every model call failed"
        if report is not None:
            return "refused before moving", in_words(report.get("reason") or "gave up", secrets)
        if record.get("agent") == "single":
            return "model failure", "the model planned no action"
    if actions and (gone := off_table(record)):
        return "object off the table", f"{', '.join(gone)} ended off the table (simulator truth)"
    if _int(record.get("failed_actions")):
        if _int(record.get("refusals")):
            return "motion failure", "the arm-allocation check refused a grasp (the object was too far for that arm)"
        return "motion failure", in_words(message or "an action failed", secrets)
    if report is not None:
        return "motion failure", in_words(report.get("reason") or "the agent gave up", secrets)
    missed = _missed(record)
    note = " (the agent reported success)" if record.get("graph_success") else ""
    if actions == 0:
        note = " (no action was run)"
    return "condition missed", ("missed: " + "; ".join(missed) if missed else "the success check failed") + note


def reason_key(reason: str) -> str:
    """The reason with its numbers blanked, so that the same failure with other measurements counts as one."""
    return re.sub(r"\d+(?:\.\d+)?", "#", reason)


def breakdown(failed: Iterable[Mapping[str, Any]], secrets: Iterable[str] = (), top: int = TOP_REASONS
              ) -> dict[str, Any]:
    """Counts per category and the ``top`` leading reasons (each: category, reason, count, up to 10 seeds)."""
    by_category = dict.fromkeys(CATEGORIES, 0)
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    secrets = tuple(secrets)
    for rec in failed:
        cat, reason = categorize(rec, secrets)
        by_category[cat] += 1
        g = groups.setdefault((cat, reason_key(reason)), {"category": cat, "reason": reason, "count": 0,
                                                          "seeds": []})
        g["count"] += 1
        if len(g["seeds"]) < 10 and isinstance(rec.get("seed"), int):
            g["seeds"].append(rec["seed"])
    leading = sorted(groups.values(), key=lambda g: (-g["count"], CATEGORIES.index(g["category"]), g["reason"]))
    return {"by_category": {k: v for k, v in by_category.items() if v}, "leading_reasons": leading[:top]}
