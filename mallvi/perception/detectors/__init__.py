"""Detectors and their one explicit registry: ``make_detector(name, **kw)``.

Names: "color" (weight-free OpenCV, the default), "raised" (weight-free, pale objects from depth), "sim"
(simulator segmentation, privileged),
"grounding_dino" and "owlv2" (transformers; need ``model=<local folder or hub id>``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mallvi.perception.types import Detector


def _color(**kw: Any) -> Detector:
    from mallvi.perception.detectors.color import ColorDetector, ColorDetectorConfig

    return ColorDetector(ColorDetectorConfig(**kw)) if kw else ColorDetector()


def _raised(**kw: Any) -> Detector:
    from mallvi.perception.detectors.raised import RaisedObjectDetector
    from mallvi.perception.raised_regions import RaisedConfig

    return RaisedObjectDetector(RaisedConfig(**kw)) if kw else RaisedObjectDetector()


def _sim(**kw: Any) -> Detector:
    from mallvi.perception.detectors.simseg import SimSegDetector

    return SimSegDetector(**kw)


def _grounding_dino(**kw: Any) -> Detector:
    from mallvi.perception.detectors.grounding_dino import GroundingDinoDetector

    return GroundingDinoDetector(**kw)


def _owlv2(**kw: Any) -> Detector:
    from mallvi.perception.detectors.owlv2 import Owlv2Detector

    return Owlv2Detector(**kw)


DETECTORS: dict[str, Callable[..., Detector]] = {
    "color": _color,
    "raised": _raised,
    "sim": _sim,
    "grounding_dino": _grounding_dino,
    "owlv2": _owlv2,
}


def make_detector(name: str, **kw: Any) -> Detector:
    """Build a detector by name; ValueError names the known ones."""
    try:
        factory = DETECTORS[name]
    except KeyError:
        raise ValueError(f"unknown detector {name!r}; choose one of {sorted(DETECTORS)}") from None
    return factory(**kw)
