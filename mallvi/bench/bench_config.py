"""A benchmark run's settings (picklable: worker processes receive them)."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from mallvi.bench.tiers import TierName
from mallvi.config import RunConfig

AgentName = Literal["mallvi", "mallvi-no-reflector", "single", "expert"]
AGENT_NAMES: tuple[AgentName, ...] = ("mallvi", "mallvi-no-reflector", "single", "expert")
CONTINGENCY_LEVELS = ("none", "easy", "medium", "hard")
#: the single agent's protocol: "paper" runs it as the original benchmark's evaluation does (its prompts, images,
#: parsing, freeze after a failed motion plan and skill semantics; the expert gets the same skill semantics);
#: "mallvi" is mallvi's own variation (not comparable with the paper; see docs/benchmark.md)
SINGLE_PROTOCOLS = ("paper", "mallvi")
#: a task's domain randomisation: "original" as the original benchmark's task config, "none" a plain table
RANDOMIZATIONS = ("original", "none")
#: the agents that look at images: the single agent, and the graph's Descriptor and Reflector (the vision model)
VISION_AGENTS = ("single", "descriptor", "reflector")
#: the single agent's model when neither --vlm-model nor --llm-model names one
SINGLE_DEFAULT_MODEL = "gpt-4o-mini"


def _without_credentials(url: str) -> str:
    """``url`` without a user, password or query string (where a key may hide), for what is written to disk."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@dataclass(frozen=True)
class BenchConfig:
    """What ``mallvi bench`` was asked to run.

    Attributes:
        tier: which tier the tasks belong to.
        tasks: task registry names.
        episodes: episodes per task (seeds whose scene cannot be set up do not count).
        seed_start: the first seed; later seeds follow consecutively.
        agent: "mallvi" (the graph), "mallvi-no-reflector", "single" (one planner) or "expert" (scripted).
        backend: "rules" or "llm" for the graph's agents and the Tier 1 answerer.
        perception: "sim", "color" or "neural" for the graph.
        contingency: fault-injection level of the simulator ("none" = off).
        llm: base_url / model / vlm_model / api_key_env for llm backends and the single agent.
        save_images: store the head image of every episode in its trace.
        single_protocol: "paper" or "mallvi" (see ``SINGLE_PROTOCOLS``): the single agent's protocol and the skill
            semantics of the single agent and the expert.
        reuse: reuse a camera frame of an unchanged scene and a scan of an unchanged frame (``bench/reuse.py``);
            results are the same either way, only faster (off only to measure what it saves).
        station: "sim" (the simulator's Station) or "twin" (the rig's Station on the simulated twin; the graph
            agents only, with ``calibration``).
        calibration: the twin's calibration YAML (from `mallvi calibrate --robot twin`).
        calibration_sha256: the SHA-256 of that file's bytes when the run was configured (not an argument): part
            of the run's identity, and every episode checks the file still has it.
        randomization: "original" (each task's domain randomisation as the original configures it: textures,
            light colours, a cluttered table where it has one; ``bench/domains.py``) or "none" (plain table).
        agent_backends: per-agent backend overrides of the graph agents, as ``mallvi run --agent-backend``.
        llm_timeout_s: seconds per model request (``--llm-timeout``).
        llm_decoding: how JSON is asked of the model (``--llm-decoding``).
        video: record each episode's head camera as ``traces/<episode>/video/head.mp4`` (``--video``).
        trace_images: which pictures the episode traces keep: "all", "keyframes" or "none" (``--trace-images``).
    """

    tier: TierName
    tasks: tuple[str, ...]
    episodes: int
    seed_start: int = 100000
    agent: AgentName = "mallvi"
    backend: str = "rules"
    perception: str = "color"
    contingency: str = "none"
    llm: dict[str, str] = field(default_factory=dict)
    save_images: bool = True
    single_protocol: str = "paper"
    reuse: bool = True
    station: str = "sim"
    calibration: str | None = None
    randomization: str = "original"
    agent_backends: dict[str, str] = field(default_factory=dict)
    llm_timeout_s: float = 60.0
    llm_decoding: str = "auto"
    calibration_sha256: str | None = field(default=None, init=False)
    video: bool = False
    trace_images: str = "all"

    def __post_init__(self) -> None:
        if self.station not in ("sim", "twin"):
            raise ValueError(f"--station must be sim or twin, got {self.station!r}")
        if self.station == "twin":
            if self.agent not in ("mallvi", "mallvi-no-reflector"):
                raise ValueError("--station twin runs the graph agents (mallvi, mallvi-no-reflector) only")
            if self.perception == "sim":
                raise ValueError("--station twin perceives like a rig: --perception color or neural")
            if not self.calibration:
                raise ValueError("--station twin needs --calibration FILE (from `mallvi calibrate --robot twin`)")
            object.__setattr__(self, "calibration_sha256", _sha256_or_none(self.calibration))
        if self.trace_images not in ("all", "keyframes", "none"):
            raise ValueError(f"--trace-images must be all, keyframes or none, got {self.trace_images!r}")
        if self.episodes < 1:
            raise ValueError(f"--episodes must be at least 1, got {self.episodes}")
        if self.seed_start < 0:
            raise ValueError(f"--seed-start must be non-negative, got {self.seed_start}")
        if self.agent not in AGENT_NAMES:
            raise ValueError(f"unknown agent {self.agent!r}; choose one of {', '.join(AGENT_NAMES)}")
        if self.backend not in ("rules", "llm"):
            raise ValueError(f"--backend must be rules or llm, got {self.backend!r}")
        if self.perception not in ("sim", "color", "neural"):
            raise ValueError(f"--perception must be sim, color or neural, got {self.perception!r}")
        if self.contingency not in CONTINGENCY_LEVELS:
            raise ValueError(f"--contingency must be one of {', '.join(CONTINGENCY_LEVELS)}, got {self.contingency!r}")
        if self.randomization not in RANDOMIZATIONS:
            raise ValueError(
                f"--randomization must be one of {', '.join(RANDOMIZATIONS)}, got {self.randomization!r}"
            )
        if self.single_protocol not in SINGLE_PROTOCOLS:
            raise ValueError(f"--single-protocol must be one of {', '.join(SINGLE_PROTOCOLS)}, "
                             f"got {self.single_protocol!r}")
        examples = self.llm.get("example_images")
        if examples and not os.path.isdir(examples):
            raise ValueError(f"--example-images {examples} is not a folder")
        if self.agent == "single" and not self.llm.get("base_url"):
            raise ValueError("the single agent is a language model: give --base-url (or MALLVI_BASE_URL)")
        if self.backend == "llm" and not self.llm.get("base_url"):
            raise ValueError("--backend llm needs --base-url (or MALLVI_BASE_URL)")
        if self.agent_backends and self.agent not in ("mallvi", "mallvi-no-reflector"):
            raise ValueError("--agent-backend sets the graph's agents: it needs --agent mallvi or mallvi-no-reflector")
        self.run_config()  # a bad backend mix, timeout or decoding is refused before anything runs

    def run_config(self, reflector: bool = True) -> RunConfig:
        """The graph agents' run configuration: backends, model endpoint, perception, fault level, and the action
        space (the fine tier's end-effector actions on the fine tier).

        Raises ConfigError (a ValueError) for an unknown agent or backend, a bad timeout or decoding.
        """
        from mallvi.config import LlmConfig

        llm = LlmConfig.from_env(self.llm.get("base_url"), self.llm.get("model"), self.llm.get("vlm_model"),
                                 timeout_s=self.llm_timeout_s, decoding=self.llm_decoding)
        backend = "llm" if self.backend == "llm" else "rules"
        perception = {"sim": "sim", "neural": "neural"}.get(self.perception, "color")
        return RunConfig(backend=backend, agent_backends=dict(self.agent_backends),  # type: ignore[arg-type]
                         perception=perception, reflector=reflector, llm=llm,  # type: ignore[arg-type]
                         contingency=self.contingency,
                         action_space="ee" if self.tier == "fine" else "primitives")

    def model_use(self) -> dict[str, str]:
        """Which agent asks which model in this run (empty when no agent uses a model).

        The single agent (also Tier 1's answerer with ``--backend llm``) asks the vision model; the graph's
        Descriptor and Reflector ask the vision model, its other agents the text model, each where its backend is
        llm (the Reflector only with the Reflector on).
        """
        single = self.llm.get("vlm_model") or self.llm.get("model") or SINGLE_DEFAULT_MODEL
        if self.agent == "single" or (self.tier == "grounding" and self.backend == "llm" and self.agent != "expert"):
            return {"single": single}
        if self.agent == "expert" or self.tier == "grounding":
            return {}
        from mallvi.config import AGENTS

        run = self.run_config(reflector=self.agent == "mallvi")
        return {a: (run.llm.vlm_model if a in VISION_AGENTS else run.llm.llm_model)
                for a in AGENTS if run.backend_of(a) == "llm" and (a != "reflector" or run.reflector)}

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["tasks"] = list(self.tasks)
        d["llm"] = {k: v for k, v in self.llm.items() if k != "api_key"}  # never write a key to disk
        if d["llm"].get("base_url"):
            d["llm"]["base_url"] = _without_credentials(d["llm"]["base_url"])
        return d

    def identity(self) -> dict[str, Any]:
        """The settings that must match for a rerun to resume this run's episodes."""
        ident = {k: v for k, v in self.to_json().items() if k in ("tier", "seed_start", "agent", "backend",
                                                                 "perception", "contingency",
                                                                 "randomization")}  # fmt: skip
        # only for the paper protocol, so folders written before it (mallvi's protocol, no key) still resume
        if self.agent in ("single", "expert") and self.single_protocol == "paper":
            ident["single_protocol"] = self.single_protocol
        if self.station != "sim":  # likewise
            ident["station"] = self.station
            ident["calibration_sha256"] = self.calibration_sha256  # the calibration's content, not only its path
        if self.agent_backends:  # likewise
            ident["agent_backends"] = dict(sorted(self.agent_backends.items()))
        if self.model_use():  # the models asked, so that a folder never mixes two models' episodes
            ident["models"] = dict(sorted(self.model_use().items()))
        return ident


def _sha256_or_none(path: str) -> str | None:
    """The SHA-256 of the file at ``path``; None when it is no calibration file (missing, not a regular file or too
    large: ``runner.check_available`` refuses it with the reason)."""
    import os

    from mallvi.robot_drivers.calibration.calibration_files import file_sha256
    from mallvi.robot_drivers.calibration.calibration_yaml import MAX_FILE_BYTES

    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_FILE_BYTES:
            return None
        return file_sha256(path)
    except OSError:
        return None
