"""Run configuration: backends, model endpoint, perception, robot, ablation switches and the graph's retry budgets."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import ClassVar, Literal
from urllib.parse import urlsplit

Backend = Literal["rules", "llm"]
PerceptionMode = Literal["sim", "color", "neural"]
AGENTS = ("decomposer", "descriptor", "perceptor", "grounder", "thinker", "reflector")


class ConfigError(ValueError):
    """An invalid option or combination of options (reported as bad input)."""


#: ``--llm-decoding`` choices: ``auto`` probes the endpoint once; the others force one way of asking for JSON
DECODING_CHOICES = ("auto", "json_schema", "json_object_schema", "structured_outputs", "guided_json", "prompt")


def check_base_url(url: str) -> None:
    """ConfigError unless ``url`` is an http(s) URL with a host (e.g. http://127.0.0.1:8000/v1)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"the model endpoint must be an http(s) URL such as http://127.0.0.1:8000/v1, "
                          f"got {url!r}")


def _check_seconds(name: str, value: float) -> None:
    if not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{name} must be a positive number of seconds, got {value!r}")


@dataclass(frozen=True)
class Budgets:
    """Retry budgets; the recursion limit is derived from them (``recursion_limit``).

    ``max_attempts_per_subtask`` and ``max_total_attempts`` count the failed attempts that chance or the check
    decided. A failure of geometry (no inverse-kinematics solution, no path, an arm not allowed) spends nothing of
    them: the failure memory rules the same calls out where the object lies, so such failures end in "no different
    strategy". As many again as the budget are allowed of them (``attempt_cap_per_subtask``, ``attempt_cap_total``).
    """

    max_attempts_per_subtask: int = 4
    rescan_after_failures: int = 2
    max_rescans_per_subtask: int = 1
    max_subtasks: int = 12
    max_total_attempts: int = 30

    def __post_init__(self) -> None:
        if self.max_attempts_per_subtask < 1 or self.max_subtasks < 1 or self.max_total_attempts < 1:
            raise ValueError("budgets must allow at least one attempt and one subtask")

    @property
    def attempt_cap_per_subtask(self) -> int:
        """Failed attempts of every kind a subtask may make: its budget, and as many failures of geometry."""
        return 2 * self.max_attempts_per_subtask

    @property
    def attempt_cap_total(self) -> int:
        """Failed attempts of every kind a run may make: its budget, and as many failures of geometry."""
        return 2 * self.max_total_attempts

    def recursion_limit(self, n_subtasks: int | None = None) -> int:
        """Super-steps a run may need: start + per attempt (dispatch..reflector, 8 steps) + re-scans."""
        n = min(n_subtasks or self.max_subtasks, self.max_subtasks)
        attempts = min(n * self.attempt_cap_per_subtask, self.attempt_cap_total + n)
        return 4 + attempts * 9 + n * self.max_rescans_per_subtask * 2 + 10


@dataclass(frozen=True)
class LlmConfig:
    """An OpenAI-compatible endpoint: base URL, models, key, timeout, retry budgets and the bound per question.

    ``timeout_s`` bounds one request; ``question_bound_s`` bounds everything one question may cost (the endpoint
    probe, every retry, re-ask and back-off wait): by default ``QUESTION_TIMEOUTS`` request timeouts.
    """

    base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    vlm_model: str = "gpt-4o-mini"
    api_key: str = field(default="", repr=False)
    timeout_s: float = 60.0
    max_retries: int = 3
    max_reasks: int = 2
    backoff_s: float = 1.0
    question_budget_s: float | None = None
    decoding: str = "auto"

    QUESTION_TIMEOUTS: ClassVar[float] = 3.0

    def __post_init__(self) -> None:
        _check_seconds("--llm-timeout", self.timeout_s)
        if self.question_budget_s is not None:
            _check_seconds("the time per question", self.question_budget_s)
        if not math.isfinite(self.backoff_s) or self.backoff_s < 0:
            raise ConfigError(f"the retry back-off must be >= 0 s, got {self.backoff_s!r}")
        if self.max_retries < 0 or self.max_reasks < 0:
            raise ConfigError("retries and re-asks must be >= 0")
        if self.decoding not in DECODING_CHOICES:
            raise ConfigError(f"--llm-decoding must be one of {', '.join(DECODING_CHOICES)}, got {self.decoding!r}")

    @property
    def question_bound_s(self) -> float:
        """The most wall time one question to the model may take, all tries included (seconds)."""
        return self.question_budget_s if self.question_budget_s is not None else self.QUESTION_TIMEOUTS * self.timeout_s

    @staticmethod
    def from_env(base_url: str | None = None, llm_model: str | None = None, vlm_model: str | None = None,
                 **kw: float | int | str) -> LlmConfig:
        """Fill base URL and key from ``MALLVI_BASE_URL`` / ``OPENAI_API_KEY`` when not given."""
        return LlmConfig(
            base_url=base_url or os.environ.get("MALLVI_BASE_URL"),
            llm_model=llm_model or os.environ.get("MALLVI_LLM_MODEL", "gpt-4o-mini"),
            vlm_model=vlm_model or os.environ.get("MALLVI_VLM_MODEL", llm_model or "gpt-4o-mini"),
            api_key=os.environ.get("OPENAI_API_KEY", ""),
            **kw,  # type: ignore[arg-type]
        )


@dataclass(frozen=True)
class RunConfig:
    """Everything ``mallvi run`` can be told.

    ``backend`` applies to every agent unless ``agent_backends`` overrides some ({"reflector": "llm"}).
    """

    backend: Backend = "rules"
    agent_backends: dict[str, Backend] = field(default_factory=dict)
    llm: LlmConfig = field(default_factory=LlmConfig)
    perception: PerceptionMode = "color"
    robot: Literal["sim", "piper", "twin"] = "sim"
    camera: Literal["sim", "realsense"] = "sim"
    camera_name: str = "head"
    reflector: bool = True
    single_agent: bool = False
    approve: bool = False
    dry_run: bool = False
    contingency: str | None = None
    budgets: Budgets = field(default_factory=Budgets)
    action_space: Literal["primitives", "ee"] = "primitives"

    def __post_init__(self) -> None:
        if self.backend not in ("rules", "llm"):
            raise ConfigError(f"backend must be 'rules' or 'llm', got {self.backend!r}")
        for agent, b in self.agent_backends.items():
            if agent not in AGENTS:
                raise ConfigError(f"unknown agent {agent!r}; agents: {', '.join(AGENTS)}")
            if b not in ("rules", "llm"):
                raise ConfigError(f"backend for {agent} must be 'rules' or 'llm', got {b!r}")
        if self.perception not in ("sim", "color", "neural"):
            raise ConfigError(f"perception must be sim, color or neural, got {self.perception!r}")
        if self.action_space not in ("primitives", "ee"):
            raise ConfigError(f"--action-space must be primitives or ee, got {self.action_space!r}")
        if self.uses_llm and not self.llm.base_url:
            raise ConfigError("the llm backend needs a base URL (--base-url or MALLVI_BASE_URL)")
        if self.uses_llm and self.llm.base_url:
            check_base_url(self.llm.base_url)

    def backend_of(self, agent: str) -> Backend:
        return self.agent_backends.get(agent, self.backend)

    @property
    def uses_llm(self) -> bool:
        return any(self.backend_of(a) == "llm" for a in AGENTS)
