"""Load a transformers model + processor once per (family, location) and reuse it.

``location`` is a local folder (loaded with ``local_files_only=True``, nothing is fetched) or a hub id
(resolved by huggingface_hub, which honours ``HF_HUB_OFFLINE``).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mallvi.perception.types import PerceptionError

log = logging.getLogger(__name__)

Family = Literal["grounding_dino", "owlv2", "sam"]


@dataclass(frozen=True)
class LoadedModel:
    """A model in eval mode with its processor."""

    family: Family
    location: str
    model: Any
    processor: Any


_CACHE: dict[tuple[str, str], LoadedModel] = {}
_LOCK = threading.Lock()
#: how many times a model was actually read from disk/hub (the cache keeps this at one per location)
load_count: dict[tuple[str, str], int] = {}


def _key(family: str, location: str) -> tuple[str, str]:
    p = Path(location).expanduser()
    return family, str(p.resolve()) if p.exists() else location


def _load_uncached(family: Family, location: str) -> LoadedModel:
    import transformers as tf

    local = Path(location).expanduser().is_dir()
    kw: dict[str, Any] = {"local_files_only": True} if local else {}
    if family == "grounding_dino":
        model = tf.AutoModelForZeroShotObjectDetection.from_pretrained(location, **kw)
        processor = tf.AutoProcessor.from_pretrained(location, **kw)
    elif family == "owlv2":
        model = tf.Owlv2ForObjectDetection.from_pretrained(location, **kw)
        processor = tf.Owlv2Processor.from_pretrained(location, **kw)
    elif family == "sam":
        model = tf.SamModel.from_pretrained(location, **kw)
        processor = tf.SamProcessor.from_pretrained(location, **kw)
    else:  # pragma: no cover - Literal guards it
        raise PerceptionError(f"unknown model family {family!r}")
    model.eval()
    return LoadedModel(family, location, model, processor)


def load(family: Family, location: str) -> LoadedModel:
    """The cached model for ``location``; PerceptionError (with the location) if it cannot be loaded."""
    if not location:
        raise PerceptionError(f"no model location given for {family}: pass a local folder or a hub id")
    key = _key(family, location)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            return hit
        try:
            loaded = _load_uncached(family, location)
        except ImportError as e:
            raise PerceptionError(f"{family} needs torch and transformers (pip install 'mallvi[neural]'): {e}") from e
        except (OSError, ValueError) as e:
            raise PerceptionError(f"cannot load {family} model from {location!r}: {e}") from e
        _CACHE[key] = loaded
        load_count[key] = load_count.get(key, 0) + 1
        log.info("loaded %s model from %s", family, location)
        return loaded


def clear_cache() -> None:
    """Forget every loaded model (frees memory; the next ``load`` reads from disk again)."""
    with _LOCK:
        _CACHE.clear()
