"""What an OpenAI-compatible endpoint offers mallvi: its models, schema-constrained decoding, and vision.

Used by ``mallvi doctor --base-url URL``. Every answer comes from a real request: ``GET /models``, the decoding
probe of ``llm_decoding``, and one chat request with a small red image ("which colour is this?").
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from langchain_core.messages import HumanMessage

from mallvi.config import LlmConfig
from mallvi.graph.backends.llm import image_data_url, make_chat_model
from mallvi.graph.backends.llm_decoding import probe_endpoint
from mallvi.graph.backends.llm_errors import describe


def list_models(cfg: LlmConfig) -> list[str]:
    """The model ids ``GET {base_url}/models`` lists (raises the client's error when the endpoint fails)."""
    import openai

    client = openai.OpenAI(base_url=cfg.base_url, api_key=cfg.api_key or "not-needed", timeout=cfg.timeout_s,
                           max_retries=0)
    return sorted(m.id for m in client.models.list())


def check_vision(cfg: LlmConfig, model: str) -> dict[str, Any]:
    """Send one 64x64 red image and ask for its colour: accepted (with the reply) or refused (with the error)."""
    chat = make_chat_model(cfg, model)
    red = np.zeros((64, 64, 3), dtype=np.uint8)
    red[..., 0] = 220
    msg = HumanMessage(content=[{"type": "text", "text": "Which colour fills this image? Answer with one word."},
                                {"type": "image_url", "image_url": {"url": image_data_url(red)}}])
    t0 = time.perf_counter()
    try:
        reply = chat.invoke([msg], max_tokens=8, extra_body={"max_tokens": 8})
    except Exception as e:
        return {"accepts_images": False, "detail": describe(e, (cfg.api_key,), 200)}
    text = reply.content if isinstance(reply.content, str) else str(reply.content)
    return {"accepts_images": True, "answer": text.strip()[:60], "sees_red": "red" in text.lower(),
            "latency_s": round(time.perf_counter() - t0, 3)}


def inspect_endpoint(cfg: LlmConfig, model: str | None = None) -> dict[str, Any]:
    """Models, decoding and vision of ``cfg.base_url`` for ``model`` (default: the first one listed)."""
    report: dict[str, Any] = {"base_url": cfg.base_url}
    try:
        models = list_models(cfg)
    except Exception as e:
        report.update(reachable=False, error=describe(e, (cfg.api_key,)))
        return report
    report.update(reachable=True, models=models)
    chosen = model or (models[0] if models else None)
    if chosen is None:
        report["error"] = "the endpoint lists no models"
        return report
    report["model"] = chosen
    caps, _ = probe_endpoint(make_chat_model(cfg, chosen), cfg.base_url or "", chosen, cfg.timeout_s,
                             secrets=(cfg.api_key,), use_cache=False)
    report["decoding"] = caps.decoding
    report["schema_constrained"] = caps.decoding != "prompt"
    report["probe"] = [{"mode": s.mode, "holds": s.ok, "latency_s": round(s.latency_s, 3), "detail": s.detail}
                       for s in caps.steps]
    report["sends_max_tokens"] = caps.send_max_tokens
    report["vision"] = check_vision(cfg, chosen)
    return report
