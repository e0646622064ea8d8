"""Before anything is written: is the model endpoint up, can each model serve the agents that ask it, and does
the Ray cluster answer?

``mallvi bench`` asks once, as ``mallvi doctor --base-url`` does: the endpoint lists its models (it answers at
all), and each model that an image-reading agent asks (``bench_config.VISION_AGENTS``) is shown a red and a blue
image and must name their colours. A text-only model given an image answers anyway (llama.cpp's text chat
template drops the image parts, and with them the text beside them), so without this check such a run scores 0
without the model ever seeing the question. A ``--ray-address`` is checked the same way: its form, then a
connection, so a bad or unreachable one leaves no half-made output folder.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from mallvi.bench.bench_config import VISION_AGENTS, BenchConfig


class ServiceUnavailableError(RuntimeError):
    """The model endpoint or the cluster a run needs did not answer; try again when it is back (exit 3)."""


class UnusableModelError(ValueError):
    """The run's settings cannot work with this endpoint (a text-only model for an agent that reads images, a
    refused key); the message says what to change (exit 2)."""


@dataclass(frozen=True)
class EndpointCheck:
    """What the endpoint answered: its host, the models it lists, each vision model's verdict."""

    endpoint: str
    models_listed: list[str] = field(default_factory=list)
    vision: dict[str, str] = field(default_factory=dict)


def endpoint_host(base_url: str | None) -> str:
    """``host[:port]`` of a base URL: no scheme, user, password or path (a key in the URL never leaves here)."""
    if not base_url:
        return ""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{host}:{port}" if port else host


#: the agents that read images, as a message names them
_AGENT_NAMES = {"single": "single agent", "descriptor": "Descriptor", "reflector": "Reflector"}


def _fix(cfg: BenchConfig, agents: list[str]) -> str:
    """What to change so that no agent that reads images asks a text-only model."""
    if "single" in agents:
        if cfg.agent == "single":
            return ("it plans from the camera images: give it a vision model (--vlm-model), or score a text-only "
                    "model with the graph: --agent mallvi --backend llm --agent-backend descriptor=rules "
                    "--agent-backend reflector=rules")
        return "Tier 1 with --backend llm answers from the head image: give a vision model (--vlm-model)"
    flags = " ".join(f"--agent-backend {a}=rules" for a in agents)
    return (f"{' and '.join(_AGENT_NAMES[a] for a in agents)} read the camera image: give a vision model with "
            f"--vlm-model, or keep the text-only model for the other agents with {flags}")


def check_endpoint(cfg: BenchConfig) -> EndpointCheck | None:
    """Ask the endpoint once before the first episode; None when no agent of ``cfg`` uses a model.

    Raises:
        ServiceUnavailableError: the endpoint does not answer (connection refused, timeout, a 5xx).
        UnusableModelError: it refuses the API key, or an agent that reads images would ask a model that ignores or
            refuses them.
    """
    use = cfg.model_use()
    if not use:
        return None
    from mallvi.graph.backends.llm.client import make_chat_model
    from mallvi.graph.backends.llm.decoding import probe_vision
    from mallvi.graph.backends.llm.endpoint import list_models
    from mallvi.graph.backends.llm.errors import describe, is_transient, status_of

    llm = cfg.run_config().llm
    host = endpoint_host(llm.base_url)
    secrets = (llm.api_key,) if llm.api_key else ()
    listed: list[str] = []
    try:
        listed = list_models(llm)
    except Exception as e:  # the client's errors: what they mean is sorted out below
        code = status_of(e)
        if code in (401, 403):
            raise UnusableModelError(f"the model endpoint at {host} refused the API key ($OPENAI_API_KEY): "
                                f"{describe(e, secrets)}") from None
        if code is None or is_transient(e):
            raise ServiceUnavailableError(f"the model endpoint at {host} did not answer ({describe(e, secrets)}); "
                                          "start it or check --base-url, then run the same command again") from None
        # it answered, but lists no models at this path (some servers do not): the vision check still tells
    verdicts: dict[str, str] = {}
    blind: dict[str, tuple[list[str], str]] = {}
    for model in sorted({m for a, m in use.items() if a in VISION_AGENTS}):
        check = probe_vision(make_chat_model(llm, model), llm.base_url or "", model, llm.timeout_s, secrets,
                             use_cache=False)
        verdicts[model] = check.verdict
        if check.verdict == "unknown":
            raise ServiceUnavailableError(f"the model endpoint at {host} did not answer the vision check of "
                                          f"{model!r} ({check.detail}); try again when it is back")
        if check.verdict in ("ignores", "refuses"):
            blind[model] = ([a for a in VISION_AGENTS if use.get(a) == model], check.detail)
    if blind:
        model, (agents, detail) = next(iter(blind.items()))
        names = " and ".join(_AGENT_NAMES[a] for a in agents)
        raise UnusableModelError(f"the model {model!r} at {host} {verdicts[model]} images ({detail}), so it cannot "
                                 f"serve the {names}: {_fix(cfg, agents)}")
    return EndpointCheck(host, listed, verdicts)


#: ``[ray://]HOST[:PORT]``: a head node's client server (ray://, port 10001 by default) or its GCS (port 6379)
_RAY_ADDRESS = re.compile(r"^(?P<scheme>ray://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)"
                          r"(?::(?P<port>[0-9]{1,5}))?$")


def ray_endpoint(address: str) -> tuple[str, int] | None:
    """The (host, port) a ``--ray-address`` points at; None for ``auto`` (the cluster this machine runs).

    Raises ValueError for anything else than ``auto``, ``ray://HOST[:PORT]`` or ``HOST[:PORT]``.
    """
    if address == "auto":
        return None
    m = _RAY_ADDRESS.match(address)
    port = int(m.group("port")) if m and m.group("port") else None
    if m is None or (port is not None and not 1 <= port <= 65535):
        raise ValueError(f"--ray-address must be ray://HOST:PORT (a head node's client server), HOST:PORT (its "
                         f"GCS address) or auto, got {address!r}")
    default = 10001 if m.group("scheme") else 6379
    return m.group("host").strip("[]"), port or default


def connect_ray(address: str, timeout_s: float = 5.0) -> None:
    """Connect this process to the Ray cluster at ``address`` before anything is written.

    Raises:
        ValueError: a malformed address, or Ray (or its client, for ray://) is not installed.
        ServiceUnavailableError: nothing answers at the address, or Ray cannot join the cluster there.
    """
    target = ray_endpoint(address)
    try:
        import ray
    except ImportError:
        raise ValueError("--ray-address needs Ray: install mallvi's cluster extra") from None
    if target is not None:
        try:
            with socket.create_connection(target, timeout=timeout_s):
                pass
        except OSError as e:
            raise ServiceUnavailableError(f"the Ray cluster at {address} cannot be reached ({e.strerror or e}); "
                                          "start its head node (ray start --head) or check --ray-address") from None
    try:
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    except ConnectionError as e:
        raise ServiceUnavailableError(f"the Ray cluster at {address} cannot be reached: {e}") from None
    except ValueError as e:
        if "requires pip package" in str(e):
            raise ValueError(f"--ray-address {address} needs Ray's client: install mallvi's cluster extra "
                             "(ray[client])") from None
        raise ValueError(f"--ray-address {address}: {e}") from None
    except RuntimeError as e:
        raise ServiceUnavailableError(f"could not join the Ray cluster at {address}: {e}") from None
