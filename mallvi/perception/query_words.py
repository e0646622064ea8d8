"""Words perception understands: colour names, shape/category synonyms and query parsing."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mallvi.perception.types import GraspCategory

COLORS: tuple[str, ...] = (
    "red", "orange", "yellow", "green", "cyan", "blue", "purple", "pink", "black", "white", "grey",
)
_SPELLINGS = {"gray": "grey"}

#: word in a query or an object name -> canonical label
LABEL_SYNONYMS: dict[str, str] = {
    "block": "block", "blocks": "block", "cube": "block", "cubes": "block", "box": "block", "brick": "block",
    "round": "round", "ball": "round", "sphere": "round", "disc": "round", "disk": "round",
    "can": "can", "cylinder": "can", "bottle": "bottle",
    "bowl": "bowl", "mug": "mug", "cup": "mug", "basket": "basket", "bin": "bin", "dustbin": "bin",
    "pad": "pad", "plate": "plate", "tray": "tray", "object": "", "thing": "", "one": "",
}

#: canonical label -> MALLVi A.8 grasp category
CATEGORY_OF_LABEL: dict[str, GraspCategory] = {
    "block": "block", "pad": "block", "tray": "block",
    "round": "round", "can": "round", "bottle": "round", "plate": "round",
    "bowl": "rimmed", "mug": "rimmed", "basket": "rimmed", "bin": "rimmed",
}

#: labels whose objects can contain others (used by the scene graph's "in" relation)
CONTAINERS: frozenset[str] = frozenset({"bowl", "mug", "basket", "bin", "tray", "plate", "box", "plasticbox", "skillet",
                                        "pan", "dustbin"})

_STOP = {"the", "a", "an", "this", "that", "of", "please", "pick", "up"}


@dataclass(frozen=True)
class ParsedQuery:
    """A query reduced to what weight-free detectors can match: colour and label ("" = any)."""

    text: str
    color: str | None
    label: str

    def matches(self, color: str | None, label: str) -> bool:
        """True when an object of ``color``/``label`` answers this query."""
        if self.color is not None and self.color != color:
            return False
        return not self.label or self.label == label


def parse_query(text: str) -> ParsedQuery:
    """Parse "red block", "the blue cube", "green" into colour + canonical label."""
    words = [_SPELLINGS.get(w, w) for w in re.findall(r"[a-z]+", text.lower()) if w not in _STOP]
    color = next((w for w in words if w in COLORS), None)
    label = ""
    for w in words:
        if LABEL_SYNONYMS.get(w):
            label = LABEL_SYNONYMS[w]
            break
    if not label:
        rest = [w for w in words if w not in COLORS and w not in LABEL_SYNONYMS]
        label = rest[-1] if rest else ""
    return ParsedQuery(text=text, color=color, label=label)


def split_name(name: str) -> tuple[str | None, str]:
    """Split an object name such as "red_block" or "blue_block_2" into (colour, canonical label)."""
    parts = [_SPELLINGS.get(p, p) for p in re.split(r"[_\s\-]+", re.sub(r"(?<=[a-z])\d+$", "", name.lower()))
             if p and not p.isdigit()]
    color = next((p for p in parts if p in COLORS), None)
    rest = [p for p in parts if p not in COLORS]
    label = ""
    for p in rest:
        if LABEL_SYNONYMS.get(p):
            label = LABEL_SYNONYMS[p]
            break
    if not label:
        label = rest[-1] if rest else "object"
    return color, label


def category_of(label: str) -> GraspCategory:
    """The A.8 grasp category for a label (anything unknown is "irregular")."""
    words = label.lower().split()
    for w in reversed(words):
        canon = LABEL_SYNONYMS.get(w, w)
        if canon in CATEGORY_OF_LABEL:
            return CATEGORY_OF_LABEL[canon]
    return "irregular"


def phrase(color: str | None, label: str) -> str:
    """The display phrase of an object: "red block", "bowl"."""
    return f"{color} {label}" if color else label
