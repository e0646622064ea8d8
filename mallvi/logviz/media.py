"""A run's images and videos as URLs the browser fetches when it needs them, and the responses behind them.

``/image?path=KEY&seq=N&exec=I`` is the artifact event ``seq`` of run ``KEY`` with its overlays drawn (``exec``:
the node execution whose outputs hold fallback boxes, -1 for none). ``/video?path=KEY&n=J`` is the run's
``J``-th recorded video, served in byte ranges so the browser can seek in it. Only regular files inside the
run's trace directory are served.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any

from flask import Request, Response

from mallvi.logviz.components.overlay import boxes_in_outputs, render_overlay_png, resolve_artifact
from mallvi.logviz.reader import RunSummary
from mallvi.tracing.jsonl import open_regular

log = logging.getLogger(__name__)

#: the largest piece of a video sent in one response (the browser asks for the rest by range)
MAX_RANGE_BYTES = 4 * 1024 * 1024
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def find_artifact(run: RunSummary, seq: int, exec_index: int) -> dict[str, Any] | None:
    """The artifact event ``seq`` of a node execution (``exec_index`` -1: outside any), or None."""
    if exec_index == -1:
        pool = run.unattached
    elif 0 <= exec_index < len(run.node_execs):
        pool = run.node_execs[exec_index].artifacts
    else:
        return None
    return next((a for a in pool if a.get("seq") == seq and a.get("kind") == "artifact"), None)


def image_png(run: RunSummary, seq: int, exec_index: int) -> bytes | None:
    """The PNG behind ``image_href`` (overlays drawn), or None when the link names nothing readable."""
    artifact = find_artifact(run, seq, exec_index)
    if artifact is None:
        return None
    outputs = run.node_execs[exec_index].outputs if exec_index >= 0 else None
    return render_overlay_png(run.directory, artifact, boxes_in_outputs(outputs))


def video_path(run: RunSummary, number: int) -> Path | None:
    """The file of the run's ``number``-th video, if it lies inside the trace directory and exists."""
    if not 0 <= number < len(run.videos):
        return None
    return resolve_artifact(run.directory, str(run.videos[number].get("path", "")))


def ranged_file_response(path: Path, request: Request, mimetype: str) -> Response:
    """A regular file in answer to a GET that may ask for a byte range (HTTP 206), as a video element does."""
    try:
        fh = open_regular(path)
    except OSError as e:
        log.warning("cannot serve %s: %s", path, e)
        return Response("not found\n", status=404, mimetype="text/plain")
    with fh:
        size = os.fstat(fh.fileno()).st_size
        start, end = 0, size - 1
        status = 200
        match = _RANGE.match(request.headers.get("Range", "").strip())
        if match and (match.group(1) or match.group(2)):
            if match.group(1):
                start = int(match.group(1))
                end = int(match.group(2)) if match.group(2) else size - 1
            else:  # the last N bytes
                start = max(0, size - int(match.group(2)))
            end = min(end, size - 1)
            if start > end or start >= size:
                return Response(status=416, headers={"Content-Range": f"bytes */{size}"})
            status = 206
        end = min(end, start + MAX_RANGE_BYTES - 1)
        fh.seek(start)
        data = fh.read(end - start + 1)
    headers = {"Accept-Ranges": "bytes", "Cache-Control": "no-cache"}
    if status == 206 or len(data) < size:
        status = 206
        headers["Content-Range"] = f"bytes {start}-{start + len(data) - 1}/{size}"
    return Response(data, status=status, mimetype=mimetype, headers=headers)
