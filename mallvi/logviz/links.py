"""The viewer's URLs for a run's images and videos (served by ``media``), fetched by the browser on demand."""

from __future__ import annotations

from urllib.parse import urlencode


def image_href(key: str, seq: int, exec_index: int) -> str:
    """The artifact event ``seq`` of run ``key`` with its overlays (``exec_index``: its node execution, or -1)."""
    return "/image?" + urlencode({"path": key, "seq": seq, "exec": exec_index})


def video_href(key: str, number: int) -> str:
    """The ``number``-th video recorded for run ``key``."""
    return "/video?" + urlencode({"path": key, "n": number})
