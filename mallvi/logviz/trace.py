"""Run traces: a versioned, append-only JSON-lines event log plus PNG artifacts.

Layout of a trace directory::

    DIR/events.jsonl      one JSON object per line, flushed as it is written
    DIR/artifacts/*.png   images referenced from events by their relative path

Every event has: ``v`` (schema version), ``seq`` (0, 1, 2, ... within the run), ``t`` (Unix time, seconds),
``run_id`` and ``kind``. The kinds and their fields are listed in ``EVENT_KINDS``; ``docs/trace_schema.md``
describes them for people.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

SCHEMA_VERSION = 1

#: kind -> the fields that event carries besides the common ones.
EVENT_KINDS: Mapping[str, tuple[str, ...]] = {
    "run_start": ("instruction", "task", "seed", "config"),
    "run_end": ("status", "success", "graph_success", "wall_s", "failure_report"),
    "node_start": ("node", "attempt", "subtask_index", "inputs"),
    "node_end": ("node", "attempt", "subtask_index", "duration_s", "outcome", "outputs", "artifacts"),
    "llm_call": ("node", "model", "prompt", "response", "latency_s", "tokens_in", "tokens_out", "error"),
    "verdict": ("subtask_index", "verdict", "failure_category", "blamed_agent", "explanation", "route_to"),
    "actor_command": ("arm", "skill", "args", "ok", "message"),
    "safety_refusal": ("arm", "command", "reason"),
    "fault_injected": ("skill", "fault", "detail"),
    "error": ("where", "message"),
    "artifact": ("name", "path", "node", "meta"),
}

_SECRET_PATTERNS = [re.compile(r"sk-[A-Za-z0-9_\-]{8,}"), re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}")]


class TraceWriter:
    """Appends events to ``DIR/events.jsonl`` and images to ``DIR/artifacts``; thread-safe.

    Secrets (``secrets`` given here, ``OPENAI_API_KEY`` from the environment and anything shaped like an
    API key) are replaced by ``***`` before an event is written.
    """

    def __init__(self, directory: str | Path, run_id: str | None = None, secrets: list[str] | None = None):
        self.dir = Path(directory)
        (self.dir / "artifacts").mkdir(parents=True, exist_ok=True)
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self._lock = threading.Lock()
        self._seq = 0
        self._secrets = [s for s in (secrets or []) if s]
        env_key = os.environ.get("OPENAI_API_KEY")
        if env_key:
            self._secrets.append(env_key)
        self._fh = open(self.dir / "events.jsonl", "a", encoding="utf-8")  # noqa: SIM115 - kept open for the run

    def emit(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Write one event now (flushed before returning) and return it."""
        if kind not in EVENT_KINDS:
            raise ValueError(f"unknown trace event kind {kind!r}")
        with self._lock:
            event = {"v": SCHEMA_VERSION, "seq": self._seq, "t": time.time(), "run_id": self.run_id, "kind": kind}
            event.update(fields)
            line = self._redact(json.dumps(event, default=_jsonable, ensure_ascii=False))
            self._fh.write(line + "\n")
            self._fh.flush()
            self._seq += 1
            return event

    def save_image(self, name: str, rgb: NDArray[np.uint8], node: str = "", **meta: Any) -> str:
        """Save an RGB (or single-channel) image as PNG; returns its path relative to the trace directory."""
        from PIL import Image

        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
        with self._lock:
            rel = f"artifacts/{self._seq:06d}_{safe}.png"
        Image.fromarray(np.ascontiguousarray(rgb)).save(self.dir / rel)
        self.emit("artifact", name=name, path=rel, node=node, meta=meta)
        return rel

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.close()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _redact(self, text: str) -> str:
        for s in self._secrets:
            text = text.replace(s, "***")
        for pat in _SECRET_PATTERNS:
            text = pat.sub(lambda m: (m.group(1) if m.lastindex else "") + "***", text)
        return text


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if isinstance(obj, Path):
        return str(obj)
    return repr(obj)


def read_events(directory: str | Path) -> list[dict[str, Any]]:
    """Every complete event of a trace, in order; a torn last line (a killed writer) is ignored."""
    return list(iter_events(directory))


def iter_events(directory: str | Path) -> Iterator[dict[str, Any]]:
    path = Path(directory) / "events.jsonl"
    if not path.exists():
        return
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.endswith("\n"):
                break  # the writer was killed mid-line
            line = line.strip()
            if line:
                yield json.loads(line)
