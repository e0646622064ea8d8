"""Tier 1 through mallvi's perception: detect each block in the head image, back-project it, x < 0 → left."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from mallvi.bench.metrics import correct_arm
from mallvi.bench.tasks.grounding import GroundingTask
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld

log = logging.getLogger(__name__)


class PerceptionGrounder:
    """Answers LEFT/RIGHT per block from the head camera only; a block it cannot find gets no answer."""

    name = "mallvi"

    def __init__(self, perception_mode: str = "color") -> None:
        from mallvi.perception.pipeline import make_perception

        self.perception = make_perception(perception_mode)

    def answer(self, task: BenchTask, world: BenchWorld, attempt: int) -> Mapping[str, str | None] | None:
        if not isinstance(task, GroundingTask):
            raise TypeError(f"{task.name} is not a grounding task")
        from mallvi.perception.types import LocalizationError

        obs = world.observe("head")
        answers: dict[str, str | None] = {}
        for name in task.blocks_x(world):  # the question names the blocks; their positions come from the image
            detections = self.perception.detect(obs, [name.replace("_", " ")])
            if not detections:
                log.info("%s: not detected", name)
                answers[name] = None
                continue
            try:
                loc = self.perception.localize(obs, detections[0])
            except LocalizationError as e:
                log.info("%s: %s", name, e)
                answers[name] = None
                continue
            answers[name] = correct_arm(float(loc.position_world[0]))
        return answers
