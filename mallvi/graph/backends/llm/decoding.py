"""How to ask an endpoint for JSON: schema-constrained decoding found by a probe, and a token bound per agent.

Endpoints constrain decoding to a JSON schema in different ways; the request fields are:

============================  ====================================================================  ==============
mode                          request body                                                          served by
============================  ====================================================================  ==============
``json_schema``               ``response_format: {type: json_schema, json_schema: {name, schema}}``  OpenAI, vLLM,
                                                                                                    llama.cpp
                                                                                                    ``llama-server``,
                                                                                                    Ollama ≥ 0.5
``json_object_schema``        ``response_format: {type: json_object, schema}``                      llama-cpp-python
``structured_outputs``        ``structured_outputs: {json: schema}``                                 vLLM ≥ 0.10
``guided_json``               ``guided_json: schema``                                               older vLLM
``prompt``                    nothing: the schema is only in the prompt                             any
============================  ====================================================================  ==============

A server that does not know a field usually ignores it, so a probe cannot trust a 200: it asks for something the
model would never write by itself (a fixed token under a fixed key, with a prompt that does not mention JSON) and
accepts a mode only when the answer is exactly that object. The first mode that passes is used for every later
request to the same endpoint and model (``probe_endpoint`` caches per process).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from mallvi.graph.backends.llm.deadline import deadline_scope
from mallvi.graph.backends.llm.errors import describe

DecodingMode = Literal["json_schema", "json_object_schema", "structured_outputs", "guided_json", "prompt"]
DECODING_MODES: tuple[DecodingMode, ...] = ("json_schema", "json_object_schema", "structured_outputs",
                                            "guided_json", "prompt")

#: Longest answer each agent needs, in tokens. JSON of these schemas runs at 2.5-3.5 characters per token; the
#: bounds hold a generous answer: the Decomposer 6 subtasks of ~150 tokens each, the Thinker 8 skill calls of
#: ~50 tokens plus a rationale, the Descriptor 12 objects and 12 relations, the Reflector a verdict and a few
#: sentences, the Perceptor a list of ids, the Grounder one index per object.
MAX_TOKENS: dict[str, int] = {
    "decomposer": 1024, "descriptor": 640, "perceptor": 128, "grounder": 192, "thinker": 640, "reflector": 320,
    "single_agent": 640,
}
DEFAULT_MAX_TOKENS = 512

_PROBE_TOKEN = "mallvi-7q"
_PROBE_SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {"probe": {"type": "string", "enum": [_PROBE_TOKEN]}},
    "required": ["probe"], "additionalProperties": False,
}


def max_tokens_for(agent: str) -> int:
    """The generation bound of one answer of ``agent``."""
    return MAX_TOKENS.get(agent, DEFAULT_MAX_TOKENS)


#: Under schema-constrained decoding every list of the Decomposer's and the Thinker's answers is bounded (unless
#: its schema bounds it already), so a model that starts repeating itself must close the list and go on: without it
#: SmolLM2-135M wrote Decomposer subtasks until ``max_tokens`` cut its JSON off. The bounds match the answers
#: ``MAX_TOKENS`` is sized for; the Descriptor's lists stay open (a cluttered table has more than 16 objects).
#: Strings are left to ``max_tokens``: llama.cpp expands a ``maxLength`` into one grammar rule per character, and
#: 160-character bounds on every string made its server grow past 7 GB and take minutes per answer.
MAX_LIST_ITEMS: dict[str, int] = {"decomposer": 8, "thinker": 16}


def max_items_for(agent: str) -> int | None:
    """The bound on each list of ``agent``'s answer under constrained decoding (None: unbounded)."""
    return MAX_LIST_ITEMS.get(agent)


def bounded_schema(schema: Any, max_items: int) -> Any:
    """A copy of a JSON schema with ``maxItems`` on every array that has none."""
    if isinstance(schema, list):
        return [bounded_schema(v, max_items) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: bounded_schema(v, max_items) for k, v in schema.items()}
    if out.get("type") == "array" and "maxItems" not in out:
        out["maxItems"] = max_items
    return out


def request_options(mode: str, schema: dict[str, Any], name: str, max_tokens: int,
                    send_max_tokens: bool = True, max_items: int | None = None) -> dict[str, Any]:
    """Keyword arguments for ``ChatOpenAI.invoke``: the token bound and the decoding fields of ``mode``.

    A constrained mode sends the schema, with ``maxItems`` on its lists when ``max_items`` is given; the prompt-only
    mode sends no schema here.

    ``max_tokens`` reaches the request as ``max_completion_tokens`` (the client's name); ``send_max_tokens`` also
    puts the older ``max_tokens`` in the body, which llama-cpp-python and some other servers read instead.
    """
    extra: dict[str, Any] = {"max_tokens": max_tokens} if send_max_tokens else {}
    schema = bounded_schema(schema, max_items) if mode != "prompt" and max_items is not None else schema
    if mode == "json_schema":
        extra["response_format"] = {"type": "json_schema",
                                    "json_schema": {"name": name, "schema": schema, "strict": False}}
    elif mode == "json_object_schema":
        extra["response_format"] = {"type": "json_object", "schema": schema}
    elif mode == "structured_outputs":
        extra["structured_outputs"] = {"json": schema}
    elif mode == "guided_json":
        extra["guided_json"] = schema
    return {"max_tokens": max_tokens, "extra_body": extra}


@dataclass
class ProbeStep:
    """One probe request: the mode tried, whether it held, what came back, how long it took."""

    mode: str
    ok: bool
    detail: str
    latency_s: float


@dataclass
class EndpointCaps:
    """What an endpoint offers for one model: the decoding mode to use and whether ``max_tokens`` may be sent."""

    decoding: str = "prompt"
    send_max_tokens: bool = True
    steps: list[ProbeStep] = field(default_factory=list)
    probed: bool = False

    def summary(self) -> str:
        tried = ", ".join(f"{s.mode}: {'yes' if s.ok else 'no'}" for s in self.steps) or "not probed"
        return f"decoding {self.decoding} ({tried})"


_CACHE: dict[tuple[str, str], EndpointCaps] = {}
_LOCK = threading.Lock()


def _probe_once(chat: BaseChatModel, mode: str, send_max_tokens: bool, timeout_s: float,
                secrets: tuple[str, ...]) -> ProbeStep:
    messages = [SystemMessage(content="You are a friendly assistant. Reply with one short sentence."),
                HumanMessage(content="Say hello.")]
    opts = request_options(mode, _PROBE_SCHEMA, "mallvi_probe", 24, send_max_tokens)
    t0 = time.perf_counter()
    try:
        with deadline_scope(time.monotonic() + timeout_s):
            reply = chat.invoke(messages, config={"run_name": f"endpoint_probe_{mode}",
                                                  "metadata": {"probe": mode}}, timeout=timeout_s, **opts)
    except Exception as e:
        return ProbeStep(mode, False, describe(e, secrets, 200), time.perf_counter() - t0)
    dt = time.perf_counter() - t0
    text = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
    try:
        ok = json.loads(text.strip()) == {"probe": _PROBE_TOKEN}
    except ValueError:
        ok = False
    return ProbeStep(mode, ok, text[:120], dt)


def probe_endpoint(chat: BaseChatModel, base_url: str, model: str, timeout_s: float, deadline: float | None = None,
                   secrets: tuple[str, ...] = (), use_cache: bool = True) -> tuple[EndpointCaps, bool]:
    """The first decoding mode the endpoint enforces (``prompt`` when none) and whether this call probed.

    Cached per base URL and model. Each probe request waits at most ``timeout_s`` and none starts after
    ``deadline`` (``time.monotonic``). A probe that cannot reach the endpoint at all (connection refused,
    timeout) or runs out of time is not cached, so a later question probes again.
    """
    key = (base_url, model)
    with _LOCK:
        if use_cache and key in _CACHE:
            return _CACHE[key], False
    caps = EndpointCaps(probed=True)
    for mode in DECODING_MODES[:-1]:
        remaining = timeout_s if deadline is None else min(timeout_s, deadline - time.monotonic())
        if remaining < 0.5:
            return caps, True
        step = _probe_once(chat, mode, caps.send_max_tokens, remaining, secrets)
        if not step.ok and caps.send_max_tokens and "max_tokens" in step.detail and "400" in step.detail:
            caps.send_max_tokens = False  # e.g. OpenAI's reasoning models refuse the old field
            step = _probe_once(chat, mode, False, remaining, secrets)
        caps.steps.append(step)
        if step.ok:
            caps.decoding = mode
            break
        if _unreachable(step):
            return caps, True
    with _LOCK:
        _CACHE[key] = caps
    return caps, True


def _unreachable(step: ProbeStep) -> bool:
    """A probe that timed out or found no server (the error's class name says so, however the client wraps it)."""
    kind = step.detail.split(":", 1)[0]
    return not step.ok and ("Timeout" in kind or "Connect" in kind)


@dataclass
class VisionCheck:
    """Whether a model sees images: ``sees``, ``ignores`` (answers, but not about the image) or ``refuses``."""

    verdict: Literal["sees", "ignores", "refuses", "unknown"]
    detail: str


_VISION: dict[tuple[str, str], VisionCheck] = {}


def _colour_image(rgb: tuple[int, int, int]) -> str:
    from mallvi.graph.backends.llm.images import image_data_url

    img = np.zeros((64, 64, 3), dtype=np.uint8)
    img[...] = rgb
    return image_data_url(img)


def probe_vision(chat: BaseChatModel, base_url: str, model: str, timeout_s: float, secrets: tuple[str, ...] = (),
                 use_cache: bool = True) -> VisionCheck:
    """Show the model a red and then a blue image and ask each one's colour; cached per base URL and model.

    A text-only server may drop the image parts and answer anyway, so a 200 proves nothing: the model ``sees``
    only when it names both colours. Not cached when the endpoint could not be reached.
    """
    key = (base_url, model)
    with _LOCK:
        if use_cache and key in _VISION:
            return _VISION[key]
    answers: list[str] = []
    for name, rgb in (("red", (220, 20, 20)), ("blue", (20, 20, 220))):
        msg = HumanMessage(content=[
            {"type": "text", "text": "Which colour fills this image? Answer with one word."},
            {"type": "image_url", "image_url": {"url": _colour_image(rgb)}}])
        try:
            with deadline_scope(time.monotonic() + timeout_s):
                reply = chat.invoke([msg], config={"run_name": "vision_probe", "metadata": {"probe": "vision"}},
                                    timeout=timeout_s, **request_options("prompt", {}, "", 8))
        except Exception as e:
            detail = describe(e, secrets, 200)
            kind = detail.split(":", 1)[0]
            if "Timeout" in kind or "Connect" in kind:
                return VisionCheck("unknown", detail)
            check = VisionCheck("refuses", detail)
            break
        text = (reply.content if isinstance(reply.content, str) else json.dumps(reply.content)).strip()
        answers.append(text[:40])
        if name not in text.lower():
            check = VisionCheck("ignores", f"asked the colour of a {name} image, it answered {text[:40]!r}")
            break
    else:
        check = VisionCheck("sees", f"named the colours of a red and a blue image ({'; '.join(answers)})")
    with _LOCK:
        _VISION[key] = check
    return check


def forget_probes() -> None:
    """Drop every cached probe result (tests; a server restarted with other options)."""
    with _LOCK:
        _CACHE.clear()
        _VISION.clear()


__all__ = ["DECODING_MODES", "MAX_TOKENS", "EndpointCaps", "ProbeStep", "VisionCheck", "forget_probes",
           "max_tokens_for", "probe_endpoint", "probe_vision", "request_options"]
