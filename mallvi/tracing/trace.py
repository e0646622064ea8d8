"""Run traces: a versioned, append-only JSON-lines event log plus PNG artifacts.

Layout of a trace directory::

    DIR/events.jsonl      one JSON object per line, flushed as it is written
    DIR/artifacts/*.png   images referenced from events by their relative path (a picture equal to the one saved
                          just before is referenced again, not written twice)
    DIR/run-2/, run-3/    later runs given the same folder (``claim_run_dir``), each laid out as above

Every event has: ``v`` (schema version), ``seq`` (0, 1, 2, ... within the run), ``t`` (Unix time, seconds),
``run_id`` and ``kind``. The kinds and their fields are listed in ``EVENT_KINDS``; ``docs/trace_schema.md``
describes them for people.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mallvi.tracing.redaction import redact_value

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1

#: kind -> the fields that event carries besides the common ones.
EVENT_KINDS: Mapping[str, tuple[str, ...]] = {
    "run_start": ("instruction", "task", "seed", "config", "station", "privileged"),
    "run_end": ("status", "success", "graph_success", "wall_s", "failure_report", "graph_status", "thread_id"),
    "node_start": ("node", "attempt", "subtask_index", "inputs", "span", "step", "run_count"),
    "node_end": (
        "node",
        "attempt",
        "subtask_index",
        "duration_s",
        "outcome",
        "outputs",
        "artifacts",
        "span",
        "route",
        "error",
    ),
    "llm_call": ("node", "model", "prompt", "response", "latency_s", "tokens_in", "tokens_out", "error", "span"),
    "verdict": ("subtask_index", "verdict", "failure_category", "blamed_agent", "explanation", "route_to", "node"),
    "actor_command": ("arm", "skill", "args", "ok", "message"),
    "safety_refusal": ("arm", "command", "reason"),
    "fault_injected": ("skill", "fault", "detail"),
    "error": ("where", "message"),
    "artifact": ("name", "path", "node", "meta"),
    "scene_graph": ("node", "objects", "relations"),
    "video": ("camera", "path", "fps", "frames", "width", "height", "frame_t"),
}

def claim_run_dir(directory: str | Path) -> Path:
    """The folder for a new run's trace under ``directory``: ``directory`` itself while it holds no trace, else
    its first free ``run-N/`` (N = 2, 3, ...). Claimed by creating its empty ``events.jsonl`` (exclusively, so two
    runs started at once never share one), so a reused trace folder never mixes two runs' events.

    Raises:
        OSError: the folder cannot be created or written (it is a file, lies under one, or is read-only).
    """
    base = Path(directory)
    base.mkdir(parents=True, exist_ok=True)
    candidates = [base] + [base / f"run-{n}" for n in range(2, 10_000)]
    for folder in candidates:
        folder.mkdir(exist_ok=True)
        try:
            with open(folder / "events.jsonl", "x", encoding="utf-8"):
                return folder
        except FileExistsError:
            continue
    raise OSError(f"{base} already holds {len(candidates)} runs")


def release_run_dir(folder: Path) -> None:
    """Undo ``claim_run_dir`` for a run refused before it wrote an event (only empty files and folders go)."""
    events = folder / "events.jsonl"
    with contextlib.suppress(OSError):
        if events.stat().st_size == 0:
            events.unlink()
            for empty in (folder / "artifacts", folder):
                with contextlib.suppress(OSError):
                    empty.rmdir()  # fails, and so stays, unless empty


#: zlib level of the trace's PNGs: 1 encodes about twice as fast as Pillow's default (6), the files are ~1.5× larger
PNG_COMPRESS_LEVEL = 1

#: which images a trace keeps (``--trace-images``): every one, the key frames only, or none
IMAGE_POLICIES = ("all", "keyframes", "none")
#: the nodes whose pictures are key frames: the scene as the run found it, and each attempt's outcome
KEYFRAME_NODES = ("descriptor", "reflector", "bench")
#: which node state a trace keeps (``--trace-state``): the summarised input state of every node, or none of it
STATE_POLICIES = ("full", "none")


class TraceWriter:
    """Appends events to ``DIR/events.jsonl`` and images to ``DIR/artifacts``; thread-safe.

    Every event passes ``redaction.redact_value`` before it is written: the process's known secrets (and
    ``secrets`` given here), anything shaped like an API key or bearer token, and string values under keys such
    as ``api_key`` or ``password`` become ``***``.

    Size: ``images`` (``IMAGE_POLICIES``) says which pictures ``save_image`` keeps; ``state`` (``STATE_POLICIES``)
    whether the graph capture records each node's input state (``keep_state``).
    """

    def __init__(self, directory: str | Path, run_id: str | None = None, secrets: list[str] | None = None,
                 images: str = "all", state: str = "full"):
        if images not in IMAGE_POLICIES:
            raise ValueError(f"trace images must be one of {', '.join(IMAGE_POLICIES)}, got {images!r}")
        if state not in STATE_POLICIES:
            raise ValueError(f"trace state must be one of {', '.join(STATE_POLICIES)}, got {state!r}")
        self.images = images
        self.keep_state = state == "full"
        self.dir = Path(directory)
        (self.dir / "artifacts").mkdir(parents=True, exist_ok=True)
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self._lock = threading.Lock()
        self._seq = 0
        self._secrets = [s for s in (secrets or []) if s]
        self._fh = open(self.dir / "events.jsonl", "a", encoding="utf-8")  # noqa: SIM115 - kept open for the run
        self._last_image: tuple[NDArray[Any], str] | None = None  # the last picture written and its path

    def emit(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Write one event now (flushed before returning) and return it."""
        if kind not in EVENT_KINDS:
            raise ValueError(f"unknown trace event kind {kind!r}")
        with self._lock:
            event = {"v": SCHEMA_VERSION, "seq": self._seq, "t": time.time(), "run_id": self.run_id, "kind": kind}
            event.update(redact_value(fields, self._secrets, default=_jsonable))
            line = json.dumps(event, default=_jsonable, ensure_ascii=False)
            self._fh.write(line + "\n")
            self._fh.flush()
            self._seq += 1
            return event

    def keeps_image(self, node: str, meta: Mapping[str, Any]) -> bool:
        """Whether ``save_image`` keeps a picture of ``node`` under this trace's image policy."""
        if self.images == "none":
            return False
        if self.images == "keyframes":
            return node in KEYFRAME_NODES and meta.get("role") != "mask"
        return True

    def save_image(self, name: str, rgb: NDArray[np.uint8], node: str = "", **meta: Any) -> str:
        """Save an RGB (or single-channel) image as PNG; returns its path relative to the trace directory, or ""
        when the trace's image policy leaves it out (masks it left out are dropped from ``meta`` too)."""
        from PIL import Image

        if not self.keeps_image(node, meta):
            return ""
        if isinstance(meta.get("masks"), list):
            meta["masks"] = [m for m in meta["masks"] if (m.get("path") if isinstance(m, dict) else m)]

        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
        with self._lock:
            last = self._last_image
            if last is not None and last[0].shape == rgb.shape and np.array_equal(last[0], rgb):
                rel, write = last[1], False  # the picture saved last, again (an unchanged scene): referenced
            else:
                rel, write = f"artifacts/{self._seq:06d}_{safe}.png", True
                self._last_image = (np.array(rgb), rel)
        if write:
            Image.fromarray(np.ascontiguousarray(rgb)).save(self.dir / rel, compress_level=PNG_COMPRESS_LEVEL)
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
    """Yield the complete events of ``DIR/events.jsonl`` in order; unreadable lines are logged and skipped."""
    path = Path(directory) / "events.jsonl"
    if not path.exists():
        return
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.endswith("\n"):
                break  # the writer was killed mid-line
            event = parse_event_line(line, f"{path}:{lineno}")
            if event is not None:
                yield event


def parse_event_line(line: str, where: str = "") -> dict[str, Any] | None:
    """One JSON-lines event, or None for a blank or corrupt line (logged)."""
    line = line.strip()
    if not line:
        return None
    try:
        event = json.loads(line)
    except json.JSONDecodeError as e:
        log.warning("skipping a corrupt trace line %s: %s", where, e)
        return None
    if not isinstance(event, dict) or "kind" not in event:
        log.warning("skipping a trace line without a kind %s", where)
        return None
    return event
