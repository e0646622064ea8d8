"""Turn graph state, node outputs and chat messages into small JSON-safe summaries for a trace."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

_DATA_URL = re.compile(r"data:([\w/+.-]+);base64,[A-Za-z0-9+/=]+")


def summarize(value: Any, *, max_str: int = 2000, max_items: int = 40, depth: int = 8) -> Any:
    """A JSON-safe, bounded copy of ``value``.

    Arrays become ``"<ndarray shape dtype>"``, bytes ``"<N bytes>"``, base64 data URLs ``"<image/png N chars>"``,
    long strings and collections are cut (the cut is marked), pydantic models and dataclasses become dicts and
    anything else its (cut) ``repr``.
    """
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return _cut(_DATA_URL.sub(lambda m: f"<{m.group(1)} {len(m.group(0))} chars>", value), max_str)
    if isinstance(value, np.ndarray):
        if value.size <= 16:
            return value.tolist()
        return f"<ndarray {'x'.join(map(str, value.shape))} {value.dtype}>"
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, bytes | bytearray):
        return f"<{len(value)} bytes>"
    if depth <= 0:
        return _cut(repr(value), 200)
    kw = {"max_str": max_str, "max_items": max_items, "depth": depth - 1}
    if hasattr(value, "model_dump") and callable(value.model_dump):
        try:
            return summarize(value.model_dump(), max_str=max_str, max_items=max_items, depth=depth)
        except Exception:  # a model that cannot dump itself is still shown by repr
            return _cut(repr(value), max_str)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return summarize(fields, max_str=max_str, max_items=max_items, depth=depth)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for i, (k, v) in enumerate(value.items()):
            if i >= max_items:
                out["…"] = f"{len(value) - max_items} more keys"
                break
            out[str(k)] = summarize(v, **kw)
        return out
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value)
        cut = [summarize(v, **kw) for v in items[:max_items]]
        if len(items) > max_items:
            cut.append(f"… {len(items) - max_items} more")
        return cut
    return _cut(repr(value), max_str)


def message_to_dict(message: Any) -> dict[str, Any]:
    """A chat message (langchain ``BaseMessage`` or a dict) as ``{"role", "content"}`` with images summarised."""
    if isinstance(message, Mapping):
        role = str(message.get("role") or message.get("type") or "?")
        content = message.get("content")
    else:
        role = str(getattr(message, "type", None) or type(message).__name__)
        content = getattr(message, "content", message)
    return {"role": role, "content": content_text(content)}


def content_text(content: Any, max_str: int = 20000) -> str:
    """Message content as text; image parts become ``[image ...]`` markers."""
    if isinstance(content, str):
        return summarize(content, max_str=max_str)
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping):
                kind = part.get("type")
                if kind == "text":
                    parts.append(str(part.get("text", "")))
                elif kind in ("image_url", "image"):
                    parts.append("[image]")
                else:
                    parts.append(f"[{kind}]")
        return summarize("\n".join(parts), max_str=max_str)
    return summarize(repr(content), max_str=max_str)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more chars]"
