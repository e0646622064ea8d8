"""Structured calls to a chat model: bounded retries on timeouts/429/5xx, JSON validated by pydantic, re-asks.

``make_chat_model`` builds langchain-openai's ``ChatOpenAI`` for any OpenAI-compatible endpoint with the
client's own retries off (``max_retries=0``) so that ``LlmClient`` owns the retry policy and records every call.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import re
import time
from collections.abc import Callable
from importlib import resources
from typing import Any, TypeVar

import numpy as np
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from numpy.typing import NDArray
from pydantic import BaseModel, ValidationError

from mallvi.config import LlmConfig
from mallvi.graph.backends.base import AgentError, CallLog
from mallvi.graph.schemas import LlmCallRecord

log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)


def make_chat_model(cfg: LlmConfig, model: str) -> BaseChatModel:
    """ChatOpenAI against ``cfg.base_url`` with no client-side retries (LlmClient retries)."""
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(base_url=cfg.base_url, model=model, api_key=cfg.api_key or "not-needed",  # type: ignore[arg-type]
                      timeout=cfg.timeout_s, max_retries=0, temperature=0.0)


def load_prompt(agent: str) -> str:
    """The prompt template mallvi/prompts/<agent>.md (package data)."""
    return resources.files("mallvi.prompts").joinpath(f"{agent}.md").read_text(encoding="utf-8")


def image_data_url(rgb: NDArray[np.uint8]) -> str:
    """A PNG data URL for an RGB image (how images reach a VLM)."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgb)).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def extract_json(text: str) -> str:
    """The JSON object in a reply (inside ``` fences or bare); the text itself if none is found."""
    m = re.search(r"```(?:json)?\s*(\{.*\})\s*```", text, re.S)
    if m:
        return m.group(1)
    start, end = text.find("{"), text.rfind("}")
    return text[start:end + 1] if 0 <= start < end else text


def _is_transient(e: Exception) -> bool:
    """Timeouts, connection errors, 429 and 5xx are worth retrying; other errors are not."""
    try:
        import openai
    except ImportError:  # pragma: no cover - langchain-openai depends on it
        return False
    if isinstance(e, openai.APITimeoutError | openai.APIConnectionError | openai.RateLimitError):
        return True
    if isinstance(e, openai.APIStatusError):
        return e.status_code == 429 or e.status_code >= 500
    return isinstance(e, TimeoutError)


class LlmClient:
    """One chat model plus the retry/validation policy; records a LlmCallRecord per request."""

    def __init__(self, chat: BaseChatModel, model: str, cfg: LlmConfig,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.chat = chat
        self.model = model
        self.cfg = cfg
        self._sleep = sleep

    def _invoke(self, node: str, messages: list[BaseMessage], log_: CallLog) -> AIMessage:
        last: Exception | None = None
        for i in range(self.cfg.max_retries + 1):
            t0 = time.perf_counter()
            try:
                reply = self.chat.invoke(messages, config={"run_name": f"{node}_llm", "metadata": {"node": node}})
            except Exception as e:
                dt = time.perf_counter() - t0
                log_.records.append(LlmCallRecord(node=node, model=self.model, latency_s=dt, attempts=i + 1, ok=False,
                                                  error=f"{type(e).__name__}: {e}"[:300]))
                if not _is_transient(e):
                    raise AgentError(f"{node}: model call failed: {type(e).__name__}: {e}") from e
                last = e
                wait = self.cfg.backoff_s * (2 ** i)
                log.warning("%s: transient model error (%s), retry %d in %.2f s", node, type(e).__name__, i + 1, wait)
                self._sleep(wait)
                continue
            dt = time.perf_counter() - t0
            usage = getattr(reply, "usage_metadata", None) or {}
            log_.records.append(LlmCallRecord(node=node, model=self.model, latency_s=dt, attempts=i + 1,
                                              tokens_in=int(usage.get("input_tokens", 0) or 0),
                                              tokens_out=int(usage.get("output_tokens", 0) or 0)))
            if not isinstance(reply, AIMessage):
                reply = AIMessage(content=str(getattr(reply, "content", reply)))
            return reply
        raise AgentError(f"{node}: model unavailable after {self.cfg.max_retries + 1} tries: {last}")

    def ask(
        self, node: str, system: str, user: str, schema: type[T], log_: CallLog,
        images: list[NDArray[np.uint8]] | None = None, check: Callable[[T], None] | None = None,
    ) -> T:
        """Ask for a JSON answer matching ``schema``; ``check`` may raise ValueError to reject it (re-asked)."""
        system = f"{system}\n\nAnswer with ONE JSON object matching this JSON schema, nothing else:\n" \
                 f"{json.dumps(schema.model_json_schema())}"
        content: list[str | dict[str, Any]] = [{"type": "text", "text": user}]
        for img in images or []:
            content.append({"type": "image_url", "image_url": {"url": image_data_url(img)}})
        messages: list[BaseMessage] = [SystemMessage(content=system), HumanMessage(content=content)]
        problem = ""
        for _ in range(self.cfg.max_reasks + 1):
            reply = self._invoke(node, messages, log_)
            text = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
            try:
                answer = schema.model_validate_json(extract_json(text))
                if check is not None:
                    check(answer)
                return answer
            except (ValidationError, ValueError) as e:
                problem = str(e).splitlines()[0] if isinstance(e, ValidationError) else str(e)
                if isinstance(e, ValidationError):
                    problem = "; ".join(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors())
                log.info("%s: invalid answer (%s), re-asking", node, problem)
                messages = [*messages, AIMessage(content=text), HumanMessage(
                    content=f"That answer was rejected: {problem}. Reply again with only the corrected JSON object.")]
        raise AgentError(f"{node}: no valid answer after {self.cfg.max_reasks + 1} tries; last problem: {problem}")
