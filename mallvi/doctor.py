"""`mallvi doctor`: what this machine offers mallvi (render device, library versions, optional extras)."""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
from typing import Any

_EXTRAS = {
    "neural": ["torch", "transformers"],
    "real": ["pyrealsense2", "piper_sdk", "can"],
    "cluster": ["ray"],
    "dev": ["pytest", "playwright", "hypothesis"],
}
_DISTS = {"can": "python-can", "piper_sdk": "piper_sdk"}


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
