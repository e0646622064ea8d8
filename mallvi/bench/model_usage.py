"""What the model cost, per episode and per success: calls, failed calls, tokens in and out, seconds waited.

Every episode record of an agent that asks a model carries ``llm_calls`` (``calls``, ``failed``, ``tokens_in``,
``tokens_out``, ``latency_s``, ``by_node``), the graph's and the single agent's alike. Per episode is the mean
over the episodes that recorded it; per success is their sum divided by their successes (what one success cost).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.preflight import endpoint_host

#: the summed fields of ``llm_calls``
USAGE_FIELDS = ("calls", "failed", "tokens_in", "tokens_out", "latency_s")


def _finite(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return 0.0
    return float(value)


def model_usage(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Totals, per-episode means and per-success costs over ``records``; None when none recorded a model call."""
    used = [r for r in records if isinstance(r.get("llm_calls"), Mapping)]
    if not used:
        return None
    totals = {k: sum(_finite(r["llm_calls"].get(k)) for r in used) for k in USAGE_FIELDS}
    wins = sum(1 for r in used if r.get("success") is True)
    by_node: dict[str, int] = {}
    for r in used:
        nodes = r["llm_calls"].get("by_node")
        for node, n in (nodes.items() if isinstance(nodes, Mapping) else ()):
            by_node[str(node)] = by_node.get(str(node), 0) + int(_finite(n))
    return {
        "episodes": len(used),
        "successes": wins,
        "totals": {k: round(v, 3) for k, v in totals.items()},
        "per_episode": {k: round(v / len(used), 3) for k, v in totals.items()},
        "per_success": {k: round(v / wins, 3) for k, v in totals.items()} if wins else None,
        "by_node": dict(sorted(by_node.items())),
    }


def models_summary(cfg: BenchConfig, endpoint: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """Which agent asked which model, at which endpoint host (never a key or path), and what the vision check
    found; None for a run without a model."""
    use = cfg.model_use()
    if not use:
        return None
    out: dict[str, Any] = {
        "by_agent": use,
        "models": sorted(set(use.values())),
        "endpoint": endpoint_host(cfg.llm.get("base_url")),
    }
    if cfg.agent in ("mallvi", "mallvi-no-reflector") and cfg.tier != "grounding":
        out["rules_agents"] = [a for a in _graph_agents(cfg) if a not in use]
    if endpoint and isinstance(endpoint.get("vision"), Mapping):
        out["vision_check"] = dict(endpoint["vision"])
    return out


def _graph_agents(cfg: BenchConfig) -> list[str]:
    from mallvi.config import AGENTS

    return [a for a in AGENTS if a != "reflector" or cfg.agent == "mallvi"]


def describe_models(summary: Mapping[str, Any] | None) -> str:
    """``decomposer, thinker: m1; descriptor: m2 (endpoint host)`` (agents grouped by model), or ``no model``."""
    if not summary:
        return "no model"
    groups: dict[str, list[str]] = {}
    for agent, model in summary["by_agent"].items():
        groups.setdefault(model, []).append(agent)
    text = "; ".join(f"{', '.join(agents)}: {model}" for model, agents in groups.items())
    rules = summary.get("rules_agents")
    if rules:
        text += f"; {', '.join(rules)}: rules"
    return text + (f" (endpoint {summary['endpoint']})" if summary.get("endpoint") else "")


def sum_usage(usages: Iterable[Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """The per-task usages added up (totals, means and per-success recomputed); None when none has one."""
    present = [u for u in usages if u]
    if not present:
        return None
    episodes = sum(int(u["episodes"]) for u in present)
    wins = sum(int(u["successes"]) for u in present)
    totals = {k: sum(float(u["totals"][k]) for u in present) for k in USAGE_FIELDS}
    return {
        "episodes": episodes,
        "successes": wins,
        "totals": {k: round(v, 3) for k, v in totals.items()},
        "per_episode": {k: round(v / episodes, 3) for k, v in totals.items()} if episodes else None,
        "per_success": {k: round(v / wins, 3) for k, v in totals.items()} if wins else None,
    }
