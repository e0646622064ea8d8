"""A SQLite checkpointer for pausable, resumable runs (human approval on a real rig)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from mallvi.graph import schemas

#: the pydantic types that may be restored from a checkpoint (nothing else is revived)
ALLOWED_TYPES = [("mallvi.graph.schemas", name) for name in dir(schemas)
                 if isinstance(getattr(schemas, name), type) and issubclass(getattr(schemas, name), schemas.BaseModel)]


def sqlite_saver(path: str | Path) -> SqliteSaver:
    """A SqliteSaver on ``path`` (created if missing) that revives only mallvi's state types."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False)
    serde: Any = JsonPlusSerializer(allowed_msgpack_modules=ALLOWED_TYPES)
    return SqliteSaver(conn, serde=serde)
