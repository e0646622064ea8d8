"""A SQLite checkpointer for pausable, resumable runs (human approval on a real rig)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from mallvi.graph import schemas

#: the pydantic types that may be restored from a checkpoint (nothing else is revived)
ALLOWED_TYPES = [("mallvi.graph.schemas", name) for name in dir(schemas)
                 if isinstance(getattr(schemas, name), type) and issubclass(getattr(schemas, name), schemas.BaseModel)]
ALLOWED_TYPES.append(("mallvi.graph.failure_memory", "FailedAttempt"))


def state_serde() -> Any:
    """The checkpoint serializer: msgpack that revives only mallvi's state types."""
    return JsonPlusSerializer(allowed_msgpack_modules=ALLOWED_TYPES)


def memory_saver() -> InMemorySaver:
    """An in-process checkpointer (approval and dry runs without a file)."""
    return InMemorySaver(serde=state_serde())


def sqlite_saver(path: str | Path) -> SqliteSaver:
    """A SqliteSaver on ``path`` (created if missing) that revives only mallvi's state types."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False)
    return SqliteSaver(conn, serde=state_serde())
