"""What a failed model request means: worth retrying or not, a content problem, and its text with secrets removed.

A model error is shown to users (stderr, ``--json``), stored (traces, ``episodes.jsonl``) and fed back into
failure reports, so every message leaves here through ``redact`` first (the process's one redaction,
``mallvi.tracing.redaction``): servers echo API keys back (a 401 that quotes the ``Authorization`` header, a proxy
that logs the request).
"""

from __future__ import annotations

from collections.abc import Iterable

from mallvi.tracing.redaction import redact_text

#: text in a 5xx body that names a problem with the request's content, not with the server's health: the same
#: request fails the same way again (e.g. a text-only chat template given content parts, a Python TypeError
#: inside the server, a model that has no vision tower given an image)
_CONTENT_MARKERS = (
    "can only concatenate", "typeerror", "keyerror", "valueerror", "attributeerror", "indexerror",
    "not supported", "does not support", "unsupported", "is not a multimodal", "image input", "image_url",
    "chat template", "invalid content", "validation error",
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with each of ``secrets``, the process's known secrets and anything key- or token-shaped replaced
    by ``***`` (``mallvi.tracing.redaction.redact_text``)."""
    return redact_text(text, secrets)


def status_of(e: BaseException) -> int | None:
    """The HTTP status of an OpenAI client error, None for anything else."""
    code = getattr(e, "status_code", None)
    return code if isinstance(code, int) else None


def is_content_error(e: BaseException) -> bool:
    """A 5xx whose text says the request itself is the problem (retrying cannot help)."""
    code = status_of(e)
    if code is None or code < 500:
        return False
    text = str(e).lower()
    return any(m in text for m in _CONTENT_MARKERS)


def is_transient(e: BaseException) -> bool:
    """Timeouts, connection errors, 429 and 5xx (other than content problems) are worth retrying."""
    try:
        import openai
    except ImportError:  # pragma: no cover - langchain-openai depends on it
        return isinstance(e, TimeoutError)
    if isinstance(e, openai.APITimeoutError | openai.APIConnectionError | openai.RateLimitError):
        return True
    if isinstance(e, openai.APIStatusError):
        return e.status_code == 429 or (e.status_code >= 500 and not is_content_error(e))
    return isinstance(e, TimeoutError)


def describe(e: BaseException, secrets: Iterable[str] = (), limit: int = 300) -> str:
    """``Type: message`` with secrets removed, cut to ``limit`` characters."""
    return redact(f"{type(e).__name__}: {e}", secrets)[:limit]


def token_count(value: object) -> int:
    """A token count from a server's ``usage``: 0 for a missing, negative, NaN or infinite value."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if value != value or value in (float("inf"), float("-inf")) or value < 0:
        return 0
    return int(value)
