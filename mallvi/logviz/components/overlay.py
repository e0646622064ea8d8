"""Draw an artifact's detection boxes, masks and grasp points (its ``meta``) onto the image, as a PNG data URL."""

from __future__ import annotations

import base64
import io
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

log = logging.getLogger(__name__)

#: high-visibility colours that do not look like the benchmark's red/green/blue/yellow/black objects
PALETTE = [(0, 229, 255), (255, 0, 255), (255, 235, 59), (255, 145, 0), (255, 255, 255), (118, 255, 3)]
MASK_ALPHA = 0.45


def resolve_artifact(trace_dir: Path, rel: str) -> Path | None:
    """An artifact path inside the trace directory, or None when it escapes it or does not exist."""
    base = trace_dir.resolve()
    path = (base / rel).resolve()
    if not path.is_relative_to(base) or not path.is_file():
        return None
    return path


def boxes_in_outputs(outputs: Any, depth: int = 4) -> list[list[Any]]:
    """Detection boxes found in a node's outputs: mappings with ``box_xyxy`` (or ``box``) and a label/query.

    Lets the viewer draw detections of a step whose image artifact carries no ``boxes`` meta.
    """
    found: list[list[Any]] = []
    if depth < 0:
        return found
    if isinstance(outputs, dict):
        box = outputs.get("box_xyxy", outputs.get("box"))
        if isinstance(box, list) and len(box) == 4 and all(_is_num(c) for c in box):
            label = outputs.get("label") or outputs.get("query") or ""
            found.append([*box, str(label), outputs.get("score")])
            return found
        for value in outputs.values():
            found.extend(boxes_in_outputs(value, depth - 1))
    elif isinstance(outputs, list):
        for value in outputs:
            found.extend(boxes_in_outputs(value, depth - 1))
    return found


def render_overlay(
    trace_dir: Path, artifact: dict[str, Any], fallback_boxes: list[list[Any]] | None = None
) -> tuple[str | None, list[str]]:
    """The artifact with its overlays as a ``data:image/png`` URL, and one caption line per overlay.

    ``fallback_boxes`` are drawn when the artifact's meta has no ``boxes``. Returns ``(None, [reason])`` when
    the image cannot be read.
    """
    image, captions = _overlay(trace_dir, artifact, fallback_boxes, draw=True)
    return (_data_url(image) if image is not None else None), captions


def render_overlay_png(
    trace_dir: Path, artifact: dict[str, Any], fallback_boxes: list[list[Any]] | None = None
) -> bytes | None:
    """The artifact with its overlays as PNG bytes (what the viewer's ``/image`` URL serves), None if unreadable."""
    image, _ = _overlay(trace_dir, artifact, fallback_boxes, draw=True)
    if image is None:
        return None
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def overlay_captions(
    trace_dir: Path, artifact: dict[str, Any], fallback_boxes: list[list[Any]] | None = None
) -> list[str]:
    """The caption lines of an artifact's overlays, from its meta alone (the image is not decoded)."""
    return _overlay(trace_dir, artifact, fallback_boxes, draw=False)[1]


def _overlay(
    trace_dir: Path, artifact: dict[str, Any], fallback_boxes: list[list[Any]] | None, draw: bool
) -> tuple[Image.Image | None, list[str]]:
    path = resolve_artifact(trace_dir, str(artifact.get("path", "")))
    if path is None:
        return None, [f"missing image {artifact.get('path')!r}"]
    image: Image.Image | None = None
    if draw:
        try:
            image = Image.open(path).convert("RGB")
        except OSError as e:
            return None, [f"unreadable image {artifact.get('path')!r}: {e}"]
    raw_meta = artifact.get("meta")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    captions: list[str] = []
    labels: dict[str, int] = {}
    masks = meta.get("masks")
    for i, mask in enumerate(masks if isinstance(masks, list) else []):
        rel, label = (mask.get("path"), mask.get("label", "")) if isinstance(mask, dict) else (mask, "")
        colour = _colour(label or f"mask{i}", labels)
        if image is not None:
            ok = _blend_mask(image, trace_dir, str(rel), colour)
        else:
            ok = resolve_artifact(trace_dir, str(rel)) is not None
        captions.append(f"mask: {label or rel}" if ok else f"mask missing: {rel}")
    pen = ImageDraw.Draw(image) if image is not None else None
    boxes = meta.get("boxes")
    if not boxes and fallback_boxes:
        boxes = fallback_boxes
        captions.append("boxes from the step's outputs")
    for box in boxes if isinstance(boxes, list) else []:
        parsed = _parse_box(box)
        if parsed is None:
            captions.append(f"bad box {box!r}"[:300])
            continue
        x1, y1, x2, y2, label, score = parsed
        colour = _colour(label, labels)
        text = f"{label} {score:.2f}" if score is not None else label
        if pen is not None:
            pen.rectangle((x1 - 1, y1 - 1, x2 + 1, y2 + 1), outline=(0, 0, 0), width=1)
            pen.rectangle((x1, y1, x2, y2), outline=colour, width=2)
            tx, ty = x1, max(0.0, y1 - 12)
            left, top, right, bottom = pen.textbbox((tx + 2, ty), text)
            pen.rectangle((left - 2, top - 1, right + 2, bottom + 1), fill=(0, 0, 0))
            pen.text((tx + 2, ty), text, fill=colour)
        captions.append(f"box: {text} [{x1:.0f}, {y1:.0f}, {x2:.0f}, {y2:.0f}]")
    points = meta.get("grasp_points")
    for point in points if isinstance(points, list) else []:
        parsed_point = _parse_grasp(point)
        if parsed_point is None:
            captions.append(f"bad grasp point {point!r}"[:300])
            continue
        u, v, yaw_rad, label = parsed_point
        if pen is not None:
            _draw_grasp(pen, u, v, yaw_rad)
        yaw_text = f", yaw {math.degrees(yaw_rad):.0f}°" if yaw_rad is not None else ""
        captions.append(f"grasp: {label} at ({u:.0f}, {v:.0f}){yaw_text}")
    return image, captions


def _blend_mask(image: Image.Image, trace_dir: Path, rel: str, colour: tuple[int, int, int]) -> bool:
    path = resolve_artifact(trace_dir, rel)
    if path is None:
        return False
    try:
        mask = np.asarray(Image.open(path).convert("L")) > 127
    except OSError:
        return False
    if mask.shape != (image.height, image.width):
        log.warning("mask %s is %s, image is %sx%s", rel, mask.shape, image.height, image.width)
        return False
    pixels = np.asarray(image).astype(np.float32)
    pixels[mask] = (1 - MASK_ALPHA) * pixels[mask] + MASK_ALPHA * np.array(colour, np.float32)
    image.paste(Image.fromarray(pixels.astype(np.uint8)))
    return True


def _draw_grasp(draw: ImageDraw.ImageDraw, u: float, v: float, yaw_rad: float | None) -> None:
    r = 6
    draw.ellipse((u - r, v - r, u + r, v + r), outline=(255, 255, 0), width=2)
    draw.line((u - 2 * r, v, u + 2 * r, v), fill=(255, 255, 0), width=1)
    draw.line((u, v - 2 * r, u, v + 2 * r), fill=(255, 255, 0), width=1)
    if yaw_rad is not None:  # the finger-closing direction in the image
        dx, dy = 3 * r * math.cos(yaw_rad), 3 * r * math.sin(yaw_rad)
        draw.line((u - dx, v - dy, u + dx, v + dy), fill=(255, 0, 255), width=3)


def _parse_box(box: Any) -> tuple[float, float, float, float, str, float | None] | None:
    if isinstance(box, dict):
        box = [box.get("x1"), box.get("y1"), box.get("x2"), box.get("y2"), box.get("label", ""), box.get("score")]
    if not isinstance(box, Sequence) or len(box) < 4 or not all(_is_num(c) for c in box[:4]):
        return None
    label = str(box[4]) if len(box) > 4 and box[4] is not None else ""
    score = float(box[5]) if len(box) > 5 and _is_num(box[5]) else None
    return float(box[0]), float(box[1]), float(box[2]), float(box[3]), label, score


def _parse_grasp(point: Any) -> tuple[float, float, float | None, str] | None:
    if isinstance(point, dict):
        point = [point.get("u"), point.get("v"), point.get("yaw_rad"), point.get("label", "")]
    if not isinstance(point, Sequence) or len(point) < 2 or not all(_is_num(c) for c in point[:2]):
        return None
    yaw = float(point[2]) if len(point) > 2 and _is_num(point[2]) else None
    label = str(point[3]) if len(point) > 3 and point[3] is not None else ""
    return float(point[0]), float(point[1]), yaw, label


def _colour(label: str, seen: dict[str, int]) -> tuple[int, int, int]:
    if label not in seen:
        seen[label] = len(seen)
    return PALETTE[seen[label] % len(PALETTE)]


def _is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _data_url(image: Image.Image) -> str:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
