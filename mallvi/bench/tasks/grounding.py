"""Tier 1 — Foundational Spatial Grounding: choose the arm (LEFT/RIGHT) for each block from the head image."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from mallvi.bench.metrics import correct_arm, episode_spatial_score
from mallvi.bench.tasks.conditions import Condition, flag
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, pos


class GroundingTask(BenchTask):
    """Base of the three Tier 1 settings. The answer is scored, not executed.

    Success Conditions:
        The episode score is the mean Gaussian-weighted spatial score over the blocks (metrics.spatial_score);
        the episode counts as a success when every block gets its correct arm (score 100).
    """

    tier = "grounding"
    max_turns: ClassVar[int] = 3  # attempts to obtain a parsable answer
    chunk: ClassVar[int] = 0
    allocation_threshold_m: ClassVar[float | None] = None
    instruction = "Decide which arm (left or right) should grasp each block on the table."

    def blocks_x(self, world: BenchWorld) -> dict[str, float]:
        """World x (metres) of each task block, by name; clutter objects are excluded."""
        return {n: float(pos(world, n)[0]) for n, o in sorted(world.objects.items()) if o.label == "block"}

    def truth(self, world: BenchWorld) -> dict[str, str]:
        """The correct arm per block."""
        return {n: correct_arm(x) for n, x in self.blocks_x(world).items()}

    def score(self, world: BenchWorld, answers: Mapping[str, str | None] | None) -> float:
        """The episode's spatial score (0..100); ``answers=None`` means no parsable output."""
        return episode_spatial_score(self.blocks_x(world), answers)

    def conditions(self, world: BenchWorld) -> list[Condition]:
        """Grounding has no manipulation goal: nothing on the table ever makes it succeed by itself."""
        return [flag("answers are scored, not a table state", False)]

    def hints(self, world: BenchWorld) -> dict[str, Any]:
        return {"blocks": sorted(self.blocks_x(world))}


class GroundingSparse(GroundingTask):
    """Tier 1, sparse setting.

    Task Description:
        Three equal cubes (red, green, blue) on the table; answer LEFT or RIGHT for each.
    Randomizations:
        Cube half-size U[0.015, 0.025] m, yaw ±0.75 rad; each cube on a random side, |x| in [0.05, 0.28],
        y in [-0.08, 0.05], centres at least 0.1 m apart and 0.1 m from (0, -0.1) (shared scene
        ``grounding_sparse``).
    Success Conditions:
        See GroundingTask.
    """

    name = "grounding_sparse"
    shared_scene = "grounding_sparse"


class GroundingDense(GroundingTask):
    """Tier 1, dense setting.

    Task Description:
        Five cubes (red, yellow, blue, green, black); answer LEFT or RIGHT for each.
    Randomizations:
        Half-size 0.025 m, yaw ±0.75 rad, |x| in [0.02, 0.28], y in [-0.16, 0.10], centres at least 0.10 m
        apart (shared scene ``grounding_dense``).
    Success Conditions:
        See GroundingTask.
    """

    name = "grounding_dense"
    shared_scene = "grounding_dense"


class GroundingCluttered(GroundingTask):
    """Tier 1, cluttered setting.

    Task Description:
        The sparse setting plus clutter objects that are not asked about.
    Randomizations:
        As sparse, plus up to 10 clutter objects kept away from the cubes (shared scene ``grounding_cluttered``).
    Success Conditions:
        See GroundingTask (clutter is not scored).
    """

    name = "grounding_cluttered"
    shared_scene = "grounding_cluttered"
