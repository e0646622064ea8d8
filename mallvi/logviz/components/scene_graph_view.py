"""The scene graph as a graph: objects placed at their world x/y (a top view), relations as labelled edges."""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go

from mallvi.logviz.scene_data import scene_graph_in

__all__ = ["object_name", "scene_graph_figure", "scene_graph_in"]


def scene_graph_figure(objects: list[dict[str, Any]], relations: list[Any]) -> go.Figure:
    """A plotly network of ``scene_graph`` event content (see docs/trace_schema.md).

    Objects without a usable ``position_m`` are placed on a circle so they still show.
    """
    pos: dict[str, tuple[float, float]] = {}
    unplaced = [o for o in objects if not _xy(o)]
    for i, obj in enumerate(objects):
        name = object_name(obj, i)
        xy = _xy(obj)
        if xy is None:
            k = unplaced.index(obj)
            angle = 2 * math.pi * k / max(len(unplaced), 1)
            xy = (0.3 * math.cos(angle), 0.3 * math.sin(angle))
        pos[name] = xy
    fig = go.Figure()
    label_x, label_y, label_text = [], [], []
    edges: dict[tuple[str, str], list[tuple[str, str]]] = {}  # one edge per object pair: (subject, relation)
    for rel in relations:
        parsed = _relation(rel)
        if parsed is None:
            continue
        subject, relation, target = parsed
        if subject in pos and target in pos:
            pair = (subject, target) if subject <= target else (target, subject)
            edges.setdefault(pair, []).append((subject, relation))
    for (subject, target), statements in edges.items():
        # the label reads from the pair's first object; a statement made the other way round is turned around
        relation = " / ".join(dict.fromkeys(rel if who == subject else _inverse(rel) for who, rel in statements))
        (x0, y0), (x1, y1) = pos[subject], pos[target]
        fig.add_trace(
            go.Scatter(
                x=[x0, x1],
                y=[y0, y1],
                mode="lines",
                line={"color": "#90a4ae", "width": 2},
                hoverinfo="skip",
                showlegend=False,
            )
        )
        label_x.append((x0 + x1) / 2)
        label_y.append((y0 + y1) / 2)
        label_text.append(relation)
    fig.add_trace(
        go.Scatter(
            x=label_x,
            y=label_y,
            mode="text",
            text=label_text,
            textfont={"size": 10, "color": "#455a64"},
            hoverinfo="skip",
            showlegend=False,
        )
    )
    names = list(pos)
    fig.add_trace(
        go.Scatter(
            x=[pos[n][0] for n in names],
            y=[pos[n][1] for n in names],
            mode="markers+text",
            text=names,
            textposition="top center",
            marker={"size": 18, "color": [_colour_of(n) for n in names], "line": {"color": "#263238", "width": 1}},
            hovertext=[_hover(o) for o in objects],
            hoverinfo="text",
            showlegend=False,
        )
    )
    fig.update_layout(
        height=320,
        margin={"l": 10, "r": 10, "t": 10, "b": 30},
        xaxis={"title": {"text": "world x (m)"}, "zeroline": True},
        yaxis={"title": {"text": "world y (m)"}, "scaleanchor": "x"},
        plot_bgcolor="#fafafa",
    )
    return fig


_INVERSE = {
    "left_of": "right_of",
    "right_of": "left_of",
    "in_front_of": "behind",
    "behind": "in_front_of",
    "front": "behind",
    "on": "under",
    "under": "on",
    "near": "near",
}


def _inverse(relation: str) -> str:
    """ "B rel' A" for "A rel B"; a relation without a known inverse is shown reversed as "(rel)"."""
    return _INVERSE.get(relation, f"({relation})⁻¹")


def object_name(obj: dict[str, Any], i: int) -> str:
    return str(obj.get("name") or obj.get("id") or obj.get("label") or f"object {i}")


def _xy(obj: dict[str, Any]) -> tuple[float, float] | None:
    p = obj.get("position_m")
    if isinstance(p, list | tuple) and len(p) >= 2 and all(isinstance(c, int | float) for c in p[:2]):
        return float(p[0]), float(p[1])
    return None


def _relation(rel: Any) -> tuple[str, str, str] | None:
    if isinstance(rel, dict):
        args = rel.get("args")
        if isinstance(args, list | tuple) and len(args) == 2:
            rel = [args[0], rel.get("relation"), args[1]]
        else:
            rel = [rel.get("subject"), rel.get("relation"), rel.get("object")]
    if isinstance(rel, list | tuple) and len(rel) == 3 and all(r is not None for r in rel):
        return str(rel[0]), str(rel[1]), str(rel[2])
    return None


_COLOURS = {"red": "#e53935", "green": "#43a047", "blue": "#1e88e5", "yellow": "#fdd835", "black": "#212121"}


def _colour_of(name: str) -> str:
    return next((c for word, c in _COLOURS.items() if word in name.lower()), "#b0bec5")


def _hover(obj: dict[str, Any]) -> str:
    parts = [f"<b>{object_name(obj, 0)}</b>"]
    for key in ("position_m", "extent_m", "size_m"):
        if obj.get(key) is not None:
            parts.append(f"{key}: {obj[key]}")
    return "<br>".join(parts)
