"""Backends per agent from a RunConfig: rules, llm, or a mix."""

from __future__ import annotations

from langchain_core.language_models.chat_models import BaseChatModel

from mallvi.config import RunConfig
from mallvi.graph.backends.backend_protocols import AgentBackends
from mallvi.graph.backends.llm import agents
from mallvi.graph.backends.llm.client import LlmClient, make_chat_model
from mallvi.graph.backends.rules import rules_backends


def make_backends(cfg: RunConfig, llm_chat: BaseChatModel | None = None,
                  vlm_chat: BaseChatModel | None = None) -> AgentBackends:
    """Rules backends, replaced by llm ones where the config asks; chat models default to ChatOpenAI."""
    b = rules_backends()
    if not cfg.uses_llm:
        return b
    text = LlmClient(llm_chat or make_chat_model(cfg.llm, cfg.llm.llm_model), cfg.llm.llm_model, cfg.llm)
    vision = LlmClient(vlm_chat or llm_chat or make_chat_model(cfg.llm, cfg.llm.vlm_model), cfg.llm.vlm_model,
                       cfg.llm)
    if cfg.backend_of("decomposer") == "llm":
        b.decomposer = agents.LlmDecomposer(text)
    if cfg.backend_of("descriptor") == "llm":
        b.descriptor = agents.LlmDescriptor(vision)
    if cfg.backend_of("perceptor") == "llm":
        b.perceptor = agents.LlmPerceptor(text)
    if cfg.backend_of("grounder") == "llm":
        b.grounder = agents.LlmGrounder(text)
    if cfg.backend_of("thinker") == "llm":
        b.thinker = agents.LlmThinker(text)
    if cfg.backend_of("reflector") == "llm":
        b.reflector = agents.LlmReflector(vision)
    return b
