"""A run's outcome, graph status and failure report in words, for the run's page."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mallvi.logviz.reader import RunSummary

#: how many of a failure report's verdicts are listed (the latest ones)
MAX_VERDICTS_SHOWN = 12

_OUTCOME_WORDS = {
    "success": "success (judged from the scene)",
    "failure": "failure (judged from the scene)",
    "planned": "planned: a dry run; the plan was made and nothing moved",
    "paused": "paused: waiting for approval; continue it with --resume",
    "running": "running",
    "incomplete": "incomplete: the trace stops without an end (killed or crashed)",
    "empty": "empty: no events",
}


def outcome_text(run: RunSummary) -> str:
    """The run's outcome in words (the judged result, or why there is none)."""
    return _OUTCOME_WORDS.get(run.outcome, run.outcome)


def graph_status_text(run: RunSummary) -> str:
    """What the graph itself reported, and a note when it disagrees with the judged outcome."""
    status = run.graph_status
    if not status:
        return "-"
    judged = run.judged
    if run.outcome in ("planned", "paused") or judged is None:
        return status
    if status == "succeeded" and judged is False:
        return f"{status} (the graph believed the task done; the scene says it is not)"
    if status != "succeeded" and judged is True:
        return f"{status} (the graph gave up, yet the scene meets the goal)"
    return status


def failure_report_text(report: Any) -> str:
    """A failure report (``run_end.failure_report``: the graph's report, a refusal text, or anything) as text."""
    if isinstance(report, str):
        return report
    if not isinstance(report, Mapping):
        return _compact(report)
    lines: list[str] = []
    subtask, index = report.get("subtask"), report.get("subtask_index")
    attempts = report.get("attempts")
    head = "The run failed"
    if subtask or index is not None:
        head += f" at subtask {index if index is not None else '?'}" + (f" ({subtask!s})" if subtask else "")
    if isinstance(attempts, int) and not isinstance(attempts, bool):
        head += f" after {attempts} attempt" + ("s" if attempts != 1 else "")
    reason = report.get("reason")
    lines.append(head + (f": {reason}" if reason else "."))
    tried = report.get("tried")
    if isinstance(tried, list) and tried:
        lines.append("")
        lines.append("Tried:")
        lines.extend(f"  - {_compact(t)}" for t in tried)
    history = report.get("history")
    if isinstance(history, list) and history:
        shown = history[-MAX_VERDICTS_SHOWN:]
        lines.append("")
        count = f"the last {len(shown)} of {len(history)}" if len(shown) < len(history) else f"{len(history)}"
        lines.append(f"Verdicts ({count}):")
        first = len(history) - len(shown) + 1
        for n, verdict in enumerate(shown, start=first):
            lines.append(f"  {n}. {_verdict_line(verdict)}")
    known = {"subtask", "subtask_index", "attempts", "reason", "tried", "history"}
    for key, value in report.items():
        if key not in known and value not in (None, "", [], {}):
            lines.append(f"{key}: {_compact(value)}")
    return "\n".join(lines)


def _verdict_line(verdict: Any) -> str:
    if not isinstance(verdict, Mapping):
        return _compact(verdict)
    parts = [str(verdict.get("verdict") or "?")]
    if verdict.get("failure_category"):
        parts.append(str(verdict["failure_category"]))
    if verdict.get("blamed_agent"):
        parts.append(f"blamed {verdict['blamed_agent']}")
    text = " · ".join(parts)
    if verdict.get("explanation"):
        text += f": {verdict['explanation']}"
    step = verdict.get("failed_step")
    if isinstance(step, Mapping) and step:
        text += f" [failed step: {_compact(step)}]"
    return text


def _compact(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):  # a value the encoder cannot take, or nested too deep
        return repr(value)[:2000]
