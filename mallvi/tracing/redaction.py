"""One redaction for everything mallvi writes out: terminal, ``--json``, traces, bench files and logs.

A model may echo the API key inside an otherwise valid answer (a refusal, a subtask's text), a server may quote
the ``Authorization`` header in an error. Every writer therefore passes its text or its record through
``redact_text`` / ``redact_value`` last, and this module knows what to remove:

- the secrets this process knows: those registered with ``register_secret`` (the model endpoint's key, when a
  client is made) and the values of ``SECRET_ENV_VARS``; a secret is removed whole and so is any run of
  ``FRAGMENT_CHARS`` or more of its consecutive characters (a key's tail quoted on its own, a key cut short);
- anything shaped like a key or a token: ``sk-…``, ``Bearer …``, ``api_key=…``, ``Authorization: …``;
- in records, every string value under a key named like a secret (``api_key``, ``password``, ``token``, …).

What is removed becomes ``***``.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

MASK = "***"
#: environment variables whose values are secrets whenever they are set
SECRET_ENV_VARS = ("OPENAI_API_KEY", "MALLVI_API_KEY")
#: a run of this many consecutive characters of a known secret is removed wherever it appears
FRAGMENT_CHARS = 8
#: known secrets shorter than this are too short to remove safely (they would cut ordinary words)
MIN_SECRET_CHARS = 4

#: the characters a token runs over: anything but white space, quotes, backslashes and brackets
_TOKEN = r"[^\s\"'\\<>()\[\]{},;`]"
#: key- and token-shaped text, each pattern's first group kept: OpenAI-style keys (sk-..., sk-proj-...),
#: ``Bearer <anything>``, ``Authorization: <anything>`` and ``api_key=<anything>``
_KEY_SHAPED = (
    re.compile(rf"(?<![A-Za-z0-9])()sk-{_TOKEN}{{6,}}"),
    re.compile(rf"(?i)(\bbearer\s+){_TOKEN}+"),
    re.compile(rf"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token)\s+)?){_TOKEN}+"),
    re.compile(rf"(?i)(\bapi[_-]?key[\"']?\s*[:=]\s*[\"']?){_TOKEN}+"),
)
#: string values under keys like these are replaced whatever they look like
SECRET_FIELD = re.compile(r"(?i)(api[_-]?key|secret|password|passwd|authorization|access[_-]?token|auth[_-]?token)")

_registered: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Remember ``value`` (e.g. the model endpoint's API key) as a secret of this process; empty values are
    ignored."""
    if value and len(value) >= MIN_SECRET_CHARS:
        with _lock:
            _registered.add(value)


def known_secrets(extra: Iterable[str] = ()) -> list[str]:
    """The registered secrets, the set ``SECRET_ENV_VARS`` and ``extra``, longest first."""
    with _lock:
        found = set(_registered)
    found.update(os.environ.get(v, "") for v in SECRET_ENV_VARS)
    found.update(s for s in extra if s)
    return sorted((s for s in found if len(s) >= MIN_SECRET_CHARS), key=len, reverse=True)


@functools.lru_cache(maxsize=64)
def _fragments(secret: str) -> tuple[str, ...]:
    """Every run of ``FRAGMENT_CHARS`` consecutive characters of ``secret`` (the secret itself when shorter)."""
    width = min(FRAGMENT_CHARS, len(secret))
    return tuple(sorted({secret[i:i + width] for i in range(len(secret) - width + 1)}))


#: a quick test for text that may hold a key- or token-shaped part (the patterns run only then)
_MAYBE_KEY_SHAPED = re.compile(r"(?i)sk-|bearer|authorization|api[_-]?key")


def _secret_spans(text: str, secret: str) -> list[tuple[int, int]]:
    """Where ``secret`` or a run of ``FRAGMENT_CHARS`` of its characters appears in ``text``."""
    spans: list[tuple[int, int]] = []
    for piece in _fragments(secret):
        width = len(piece)
        start = text.find(piece)
        while start >= 0:
            spans.append((start, start + width))
            start = text.find(piece, start + 1)
    return spans


def _mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    spans.sort()
    out: list[str] = []
    pos = 0
    cur_start, cur_end = spans[0]
    for start, end in spans[1:]:
        if start <= cur_end:  # overlapping or touching fragments are one
            cur_end = max(cur_end, end)
            continue
        out += [text[pos:cur_start], MASK]
        pos, (cur_start, cur_end) = cur_end, (start, end)
    out += [text[pos:cur_start], MASK, text[cur_end:]]
    return "".join(out)


def redact_text(text: str, extra: Iterable[str] = ()) -> str:
    """``text`` with every known secret (and fragment of one), and anything key- or token-shaped, as ``***``."""
    return _redact(text, known_secrets(extra)) if text else text


def _redact(text: str, secrets: list[str]) -> str:
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        spans += _secret_spans(text, secret)
    text = _mask_spans(text, spans)
    if not _MAYBE_KEY_SHAPED.search(text):
        return text
    for pattern in _KEY_SHAPED:
        text = pattern.sub(lambda m: m.group(1) + MASK, text)
    return text


def redact_value(value: Any, extra: Iterable[str] = (), default: Callable[[Any], Any] = repr) -> Any:
    """A copy of a JSON-like record (mappings, lists, strings, numbers) with every string redacted
    (``redact_text``), keys included, and string values under secret-named keys replaced by ``***``.

    Any other object is first turned into JSON-like data by ``default`` (as ``json.dumps`` would), then redacted.
    """
    return _walk(value, known_secrets(extra), default, 0)


def _walk(value: Any, secrets: list[str], default: Callable[[Any], Any], depth: int) -> Any:
    if isinstance(value, str):
        return _redact(value, secrets)
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth > 200:  # deeper than any record mallvi writes: its text is redacted whole
        return _redact(repr(value), secrets)
    if isinstance(value, Mapping):
        return {
            (_redact(k, secrets) if isinstance(k, str) else k):
                (MASK if isinstance(v, str) and v and SECRET_FIELD.search(str(k))
                 else _walk(v, secrets, default, depth + 1))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_walk(v, secrets, default, depth + 1) for v in value]
    return _walk(default(value), secrets, default, depth + 1)


__all__ = ["MASK", "SECRET_ENV_VARS", "known_secrets", "redact_text", "redact_value", "register_secret"]
