"""Structured calls to a chat model: JSON validated by pydantic and re-asked, bounded in tokens and in time.

``make_chat_model`` builds langchain-openai's ``ChatOpenAI`` for any OpenAI-compatible endpoint with the
client's own retries off (``max_retries=0``) so that ``LlmClient`` owns the retry policy and records every call.
Each question (``LlmClient.ask``) uses the endpoint's schema-constrained decoding when a probe found one
(``llm_decoding``), asks for at most the agent's token bound, and ends within ``LlmConfig.question_bound_s``:
the probe, retries with back-off, and re-asks all count, and no wait follows the last try. The bound is a real
deadline (``deadline.py``): every request runs under the question's deadline and its own (``timeout_s``), and a
server that trickles its answer byte by byte is cut off at the earlier of the two.
"""

from __future__ import annotations

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
from mallvi.graph.agent_errors import AgentError
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.llm.deadline import deadline_scope, http_client, requests_aborted
from mallvi.graph.backends.llm.decoding import (
    EndpointCaps,
    max_items_for,
    max_tokens_for,
    probe_endpoint,
    probe_vision,
    request_options,
)
from mallvi.graph.backends.llm.errors import (
    describe,
    is_content_error,
    is_transient,
    redact,
    status_of,
    token_count,
)
from mallvi.graph.backends.llm.images import image_data_url
from mallvi.graph.schemas import LlmCallRecord
from mallvi.tracing.redaction import register_secret

log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)


def make_chat_model(cfg: LlmConfig, model: str) -> BaseChatModel:
    """ChatOpenAI against ``cfg.base_url`` with no client-side retries (LlmClient retries)."""
    from langchain_openai import ChatOpenAI

    register_secret(cfg.api_key)
    return ChatOpenAI(base_url=cfg.base_url, model=model, api_key=cfg.api_key or "not-needed",  # type: ignore[arg-type]
                      timeout=cfg.timeout_s, max_retries=0, temperature=0.0, http_client=http_client())


def load_prompt(agent: str) -> str:
    """The prompt template mallvi/prompts/<agent>.md (package data)."""
    return resources.files("mallvi.prompts").joinpath(f"{agent}.md").read_text(encoding="utf-8")


def extract_json(text: str) -> str:
    """The JSON object in a reply (inside ``` fences or bare); the text itself if none is found."""
    m = re.search(r"```(?:json)?\s*(\{.*\})\s*```", text, re.S)
    if m:
        return m.group(1)
    start, end = text.find("{"), text.rfind("}")
    return text[start:end + 1] if 0 <= start < end else text


#: HTTP statuses with which a server says it cannot take the request's content (with images: not a vision model)
_CONTENT_STATUSES = (400, 404, 415, 422)


def _user_message(user: str, images: list[NDArray[np.uint8]] | None) -> HumanMessage:
    """Plain string content without images (text-only chat templates need it); content parts with images."""
    if not images:
        return HumanMessage(content=user)
    parts: list[str | dict[str, Any]] = [{"type": "text", "text": user}]
    parts += [{"type": "image_url", "image_url": {"url": image_data_url(img)}} for img in images]
    return HumanMessage(content=parts)


def _is_openai_client(chat: BaseChatModel) -> bool:
    from langchain_openai.chat_models.base import BaseChatOpenAI

    return isinstance(chat, BaseChatOpenAI)


class LlmClient:
    """One chat model plus the retry/validation policy; records a LlmCallRecord per request."""

    def __init__(self, chat: BaseChatModel, model: str, cfg: LlmConfig,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.chat = chat
        self.model = model
        self.cfg = cfg
        self._sleep = sleep
        self._secrets = (cfg.api_key,) if cfg.api_key else ()
        register_secret(cfg.api_key)

    def endpoint(self, node: str, log_: CallLog, deadline: float) -> EndpointCaps:
        """How to ask this endpoint for JSON: forced by ``cfg.decoding`` or probed once (probe calls are logged)."""
        if self.cfg.decoding != "auto":
            return EndpointCaps(decoding=self.cfg.decoding)
        if not _is_openai_client(self.chat):  # an in-process chat model has no endpoint to probe
            return EndpointCaps(decoding="prompt")
        caps, fresh = probe_endpoint(self.chat, self.cfg.base_url or "", self.model, self.cfg.timeout_s,
                                     deadline, self._secrets)
        if fresh:
            for step in caps.steps:
                log_.records.append(LlmCallRecord(
                    node=node, model=self.model, latency_s=step.latency_s, ok=step.ok, purpose="probe",
                    decoding=step.mode, error=None if step.ok else f"probe: {step.detail}"[:300]))
            log.info("%s: %s at %s: %s", node, self.model, self.cfg.base_url, caps.summary())
        return caps

    def _require_vision(self, node: str) -> None:
        """AgentError unless the model sees images (checked once per endpoint and model)."""
        if not _is_openai_client(self.chat):
            return
        check = probe_vision(self.chat, self.cfg.base_url or "", self.model, self.cfg.timeout_s, self._secrets)
        if check.verdict in ("ignores", "refuses"):
            raise AgentError(f"{node}: the model {self.model!r} {check.verdict} images, so it cannot serve the "
                             f"{node} (choose a vision model with --vlm-model, or --agent-backend {node}=rules): "
                             f"{check.detail}")

    def _fail(self, node: str, e: Exception, msg: str, images: bool) -> AgentError:
        code = status_of(e)
        if images and (code in _CONTENT_STATUSES or is_content_error(e)):
            return AgentError(f"{node}: the model {self.model!r} did not take the image, so it is probably not a "
                              f"vision model (choose one with --vlm-model): {msg}")
        if code in (401, 403):
            return AgentError(f"{node}: the endpoint refused the API key for model {self.model!r}: {msg}")
        return AgentError(f"{node}: model call to {self.model!r} failed: {msg}")

    def _invoke(self, node: str, messages: list[BaseMessage], log_: CallLog, deadline: float,
                opts: dict[str, Any], decoding: str, images: bool) -> AIMessage:
        last, last_500, tries = "", "", 0
        for i in range(self.cfg.max_retries + 1):
            remaining = deadline - time.monotonic()
            if remaining < 0.1:
                break
            tries += 1
            t0 = time.perf_counter()
            record = LlmCallRecord(node=node, model=self.model, latency_s=0.0, attempts=i + 1, decoding=decoding,
                                   max_tokens=opts.get("max_tokens"))
            request_s = min(self.cfg.timeout_s, remaining)
            try:
                with deadline_scope(time.monotonic() + request_s):
                    reply = self.chat.invoke(messages, config={"run_name": f"{node}_llm", "metadata": {"node": node}},
                                             timeout=request_s, **opts)
            except Exception as e:
                msg = describe(e, self._secrets)
                log_.records.append(record.model_copy(update={"latency_s": time.perf_counter() - t0, "ok": False,
                                                              "error": msg}))
                if requests_aborted():
                    raise AgentError(f"{node}: the model request to {self.model!r} was stopped: the run was "
                                     f"interrupted") from None
                if not is_transient(e):
                    raise self._fail(node, e, msg, images) from None
                if status_of(e) == 500 and msg == last_500:
                    raise AgentError(f"{node}: the endpoint failed the same way twice, which retrying will not "
                                     f"change: {msg}") from None
                last_500 = msg if status_of(e) == 500 else ""
                last = msg
                wait = self.cfg.backoff_s * (2 ** i)
                if i == self.cfg.max_retries or deadline - time.monotonic() - wait < 0.5:
                    break  # no wait after the last try, nor one that leaves no time for another
                log.warning("%s: transient model error (%s), retry %d in %.2f s", node, type(e).__name__, i + 1, wait)
                self._sleep(wait)
                continue
            usage = getattr(reply, "usage_metadata", None) or {}
            log_.records.append(record.model_copy(update={
                "latency_s": time.perf_counter() - t0, "tokens_in": token_count(usage.get("input_tokens")),
                "tokens_out": token_count(usage.get("output_tokens"))}))
            if not isinstance(reply, AIMessage):
                reply = AIMessage(content=str(getattr(reply, "content", reply)))
            return reply
        raise AgentError(f"{node}: model {self.model!r} unavailable after {tries} tries within the "
                         f"{self.cfg.question_bound_s:.0f} s allowed per question: {last or 'no time left'}")

    def ask(
        self, node: str, system: str, user: str, schema: type[T], log_: CallLog,
        images: list[NDArray[np.uint8]] | None = None, check: Callable[[T], None] | None = None,
    ) -> T:
        """Ask for a JSON answer matching ``schema``; ``check`` may raise ValueError to reject it (re-asked).

        Raises AgentError when no valid answer came within ``cfg.max_reasks`` re-asks or
        ``cfg.question_bound_s`` seconds, whichever ends first.
        """
        deadline = time.monotonic() + self.cfg.question_bound_s
        with deadline_scope(deadline):  # no request of this question (probes included) outlives it
            return self._ask(node, system, user, schema, log_, images, check, deadline)

    def _ask(
        self, node: str, system: str, user: str, schema: type[T], log_: CallLog,
        images: list[NDArray[np.uint8]] | None, check: Callable[[T], None] | None, deadline: float,
    ) -> T:
        caps = self.endpoint(node, log_, deadline)
        if images:
            self._require_vision(node)
        schema_json = schema.model_json_schema()
        opts = request_options(caps.decoding, schema_json, schema.__name__, max_tokens_for(node),
                               caps.send_max_tokens, max_items_for(node))
        if caps.decoding == "prompt":
            system = f"{system}\n\nAnswer with ONE JSON object matching this JSON schema, nothing else:\n" \
                     f"{json.dumps(schema_json)}"
        else:  # the endpoint holds the answer to the schema: a prompt a third as long, so a faster answer
            system = f"{system}\n\nAnswer with ONE JSON object with the fields described above, nothing else."
        messages: list[BaseMessage] = [SystemMessage(content=system), _user_message(user, images)]
        problem = ""
        for _ in range(self.cfg.max_reasks + 1):
            if problem and deadline - time.monotonic() < 0.1:
                break
            reply = self._invoke(node, messages, log_, deadline, opts, caps.decoding, bool(images))
            text = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
            text = redact(text, self._secrets)  # an echoed key never enters the graph's state or checkpoints
            try:
                # strict=False: a raw control character inside a string is taken as it is (llama.cpp's JSON
                # grammar lets a constrained model write one; the answer is otherwise well formed)
                answer = schema.model_validate(json.loads(extract_json(text), strict=False))
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
