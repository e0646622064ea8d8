"""OWLv2 (transformers) as a Detector: one text query per object phrase, boxes labelled by query index.

OWLv2 pads images to a square before resizing, so boxes are scaled to max(H, W) and then clipped.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from mallvi.contracts.observation import Observation
from mallvi.perception.detectors.neural_common import DEFAULT_VOCABULARY, clean_queries, make_detection, nms
from mallvi.perception.neural.loading import load
from mallvi.perception.types import Detection

log = logging.getLogger(__name__)


class Owlv2Detector:
    """Open-vocabulary detection; ``model`` is a local folder or a hub id, loaded once per process."""

    name = "owlv2"

    def __init__(self, model: str, threshold: float = 0.1, vocabulary: Sequence[str] = DEFAULT_VOCABULARY) -> None:
        self.loaded = load("owlv2", model)
        self.threshold = threshold
        self.vocabulary = tuple(vocabulary)

    def detect(self, obs: Observation, queries: list[str]) -> list[Detection]:
        import torch

        texts = clean_queries(queries, self.vocabulary)
        if not texts:
            return []
        originals = list(queries) if queries else list(texts)
        proc, model = self.loaded.processor, self.loaded.model
        inputs = proc(images=obs.rgb, text=[texts], return_tensors="pt", padding="max_length", truncation=True)
        with torch.no_grad():
            outputs = model(**inputs)
        side = max(obs.height, obs.width)
        result = proc.post_process_grounded_object_detection(
            outputs, threshold=self.threshold, target_sizes=[(side, side)],
        )[0]
        out: list[Detection] = []
        for box, score, k in zip(result["boxes"].tolist(), result["scores"].tolist(), result["labels"].tolist(),
                                 strict=True):
            original = originals[k] if k < len(originals) else texts[k]
            det = make_detection(box, float(score), texts[k], original, self.name, obs.width, obs.height)
            if det is not None:
                out.append(det)
        log.debug("owlv2: %d boxes for %s", len(out), texts)
        return nms(out)
