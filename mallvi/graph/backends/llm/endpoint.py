"""What an OpenAI-compatible endpoint offers mallvi: its models, schema-constrained decoding, and vision.

Used by ``mallvi doctor --base-url URL``. Every answer comes from a real request: ``GET /models``, the decoding
probe of ``llm_decoding``, and its vision check (a red and a blue image: "which colour is this?").
"""

from __future__ import annotations

import time
from typing import Any

from mallvi.config import LlmConfig
from mallvi.graph.backends.llm.client import make_chat_model
from mallvi.graph.backends.llm.deadline import deadline_scope, http_client
from mallvi.graph.backends.llm.decoding import probe_endpoint, probe_vision
from mallvi.graph.backends.llm.errors import describe


def list_models(cfg: LlmConfig) -> list[str]:
    """The model ids ``GET {base_url}/models`` lists (raises the client's error when the endpoint fails)."""
    import openai

    client = openai.OpenAI(base_url=cfg.base_url, api_key=cfg.api_key or "not-needed", timeout=cfg.timeout_s,
                           max_retries=0, http_client=http_client())
    with deadline_scope(time.monotonic() + cfg.timeout_s):
        return sorted(m.id for m in client.models.list())


def check_vision(cfg: LlmConfig, model: str) -> dict[str, Any]:
    """Whether ``model`` sees images: shown a red and a blue image, does it name their colours?"""
    check = probe_vision(make_chat_model(cfg, model), cfg.base_url or "", model, cfg.timeout_s, (cfg.api_key,),
                         use_cache=False)
    return {"verdict": check.verdict, "detail": check.detail}


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
