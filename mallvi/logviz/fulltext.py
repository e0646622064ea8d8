"""Long texts of a step (model prompts and responses, inputs, outputs): cut for the page, whole as a download.

A model may answer with megabytes; the browser gets at most ``MAX_SHOWN_CHARS`` of each text, and the page links
to ``/download?path=KEY&exec=I&call=J&part=PART`` for the whole of it (``exec=-1``: the run's own LLM calls,
outside any node execution).
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlencode

from mallvi.logviz.reader import RunSummary

MAX_SHOWN_CHARS = 20_000
#: what can be downloaded: an LLM call's prompt or response, a node execution's inputs or outputs
CALL_PARTS = ("prompt", "response")
STEP_PARTS = ("inputs", "outputs")
RUN_CALLS = -1


def cut(text: str, limit: int = MAX_SHOWN_CHARS) -> tuple[str, int]:
    """The first ``limit`` characters of ``text`` and how many were left out."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def download_href(key: str, exec_index: int, part: str, call: int | None = None) -> str:
    query: dict[str, Any] = {"path": key, "exec": exec_index, "part": part}
    if call is not None:
        query["call"] = call
    return "/download?" + urlencode(query)


def download_name(key: str, exec_index: int, part: str, call: int | None = None) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", key.strip("./")) or "run"
    where = "run" if exec_index == RUN_CALLS else f"step{exec_index}"
    return f"{stem}-{where}" + (f"-call{call + 1}" if call is not None else "") + f"-{part}.txt"


def prompt_text(prompt: Any) -> str:
    """A recorded prompt (a list of ``{role, content}`` messages, or anything else) as text."""
    if isinstance(prompt, list):
        return "\n\n".join(f"[{m.get('role')}]\n{m.get('content')}" for m in prompt if isinstance(m, dict))
    return str(prompt)


def json_text(value: Any, indent: int | None = 2) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False, default=str)


def loose_llm_calls(run: RunSummary) -> list[dict[str, Any]]:
    """The run's LLM calls that belong to no node execution, in order."""
    return [e for e in run.unattached if e.get("kind") == "llm_call"]


def full_text(run: RunSummary, exec_index: int, part: str, call: int | None) -> str | None:
    """The whole text behind a download link, or None when the link names nothing in this run."""
    if part in CALL_PARTS:
        if call is None:
            return None
        if exec_index == RUN_CALLS:
            calls = loose_llm_calls(run)
        elif 0 <= exec_index < len(run.node_execs):
            calls = run.node_execs[exec_index].llm_calls
        else:
            return None
        if not 0 <= call < len(calls):
            return None
        value = run.event_value(calls[call], part)
        return prompt_text(value) if part == "prompt" else str(value or "")
    if part in STEP_PARTS and 0 <= exec_index < len(run.node_execs):
        return json_text(getattr(run.node_execs[exec_index], part))
    return None
