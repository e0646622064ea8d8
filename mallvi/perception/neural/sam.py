"""SAM (transformers) as a Segmenter: the detection box is the prompt; the best-scoring mask is kept."""

from __future__ import annotations

import numpy as np

from mallvi.contracts.observation import Observation
from mallvi.perception.neural.loading import load
from mallvi.perception.segmentation import Mask, largest_component
from mallvi.perception.types import Detection


class SamSegmenter:
    """Box-prompted SAM; ``model`` is a local folder or a hub id, loaded once per process."""

    name = "sam"

    def __init__(self, model: str, min_area_px: int = 4) -> None:
        self.loaded = load("sam", model)
        self.min_area_px = min_area_px

    def segment(self, obs: Observation, detection: Detection) -> Mask | None:
        import torch

        proc, model = self.loaded.processor, self.loaded.model
        inputs = proc(images=obs.rgb, input_boxes=[[list(detection.box_xyxy)]], return_tensors="pt")
        with torch.no_grad():
            outputs = model(**inputs, multimask_output=True)
        masks = proc.image_processor.post_process_masks(
            outputs.pred_masks, inputs["original_sizes"], inputs["reshaped_input_sizes"],
        )[0][0]  # (num_masks, H, W) for the one box
        best = int(torch.argmax(outputs.iou_scores[0, 0]).item())
        mask = np.asarray(masks[best].numpy(), dtype=bool)
        if int(mask.sum()) < self.min_area_px:
            return None
        return largest_component(mask)
