"""GroundingDINO (transformers) as a Detector: one text prompt "q1. q2. ...", boxes mapped back to queries."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from mallvi.contracts.observation import Observation
from mallvi.perception.detectors.neural_common import (
    DEFAULT_VOCABULARY,
    best_query,
    clean_queries,
    make_detection,
    nms,
)
from mallvi.perception.neural.loading import load
from mallvi.perception.types import Detection

log = logging.getLogger(__name__)


class GroundingDinoDetector:
    """Open-vocabulary detection; ``model`` is a local folder or a hub id, loaded once per process."""

    name = "grounding_dino"

    def __init__(self, model: str, box_threshold: float = 0.3, text_threshold: float = 0.25,
                 vocabulary: Sequence[str] = DEFAULT_VOCABULARY) -> None:
        self.loaded = load("grounding_dino", model)
        self.box_threshold = box_threshold
        self.text_threshold = text_threshold
        self.vocabulary = tuple(vocabulary)

    def detect(self, obs: Observation, queries: list[str]) -> list[Detection]:
        import torch

        texts = clean_queries(queries, self.vocabulary)
        if not texts:
            return []
        originals = list(queries) if queries else list(texts)
        proc, model = self.loaded.processor, self.loaded.model
        inputs = proc(images=obs.rgb, text=". ".join(texts) + ".", return_tensors="pt")
        with torch.no_grad():
            outputs = model(**inputs)
        result = proc.post_process_grounded_object_detection(
            outputs, inputs["input_ids"], threshold=self.box_threshold, text_threshold=self.text_threshold,
            target_sizes=[(obs.height, obs.width)],
        )[0]
        labels = result.get("text_labels") or result.get("labels") or []
        out: list[Detection] = []
        for box, score, text in zip(result["boxes"].tolist(), result["scores"].tolist(), labels, strict=False):
            k = best_query(str(text), texts)
            if k is None:
                continue
            original = originals[k] if k < len(originals) else texts[k]
            det = make_detection(box, float(score), texts[k], original, self.name, obs.width, obs.height)
            if det is not None:
                out.append(det)
        log.debug("grounding_dino: %d boxes for %s", len(out), texts)
        return nms(out)
