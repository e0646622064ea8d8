"""The one registry of ST-BiBench tasks: every task class listed once, by name."""

from __future__ import annotations

from mallvi.bench.tasks.blocks_cross_shape import BlocksCrossShape
from mallvi.bench.tasks.blocks_ranking_rgb import BlocksRankingRgb
from mallvi.bench.tasks.blocks_ranking_size import BlocksRankingSize
from mallvi.bench.tasks.blocks_tower import BlocksTower
from mallvi.bench.tasks.grab_roller import GrabRoller
from mallvi.bench.tasks.grounding import GroundingCluttered, GroundingDense, GroundingSparse
from mallvi.bench.tasks.handover_block import HandoverBlock
from mallvi.bench.tasks.handover_mic import HandoverMic
from mallvi.bench.tasks.hanging_mug import HangingMug
from mallvi.bench.tasks.place_bread_skillet import PlaceBreadSkillet, PlaceBreadSkilletEE
from mallvi.bench.tasks.place_burger_fries import PlaceBurgerFries, PlaceBurgerFriesEE
from mallvi.bench.tasks.place_cans_plasticbox import PlaceCansPlasticbox
from mallvi.bench.tasks.place_object_basket import PlaceObjectBasket
from mallvi.bench.tasks.place_object_scale import PlaceObjectScale
from mallvi.bench.tasks.put_bottles_dustbin import PutBottlesDustbin
from mallvi.bench.tasks.stack_blocks_three import StackBlocksThree
from mallvi.bench.tasks.stack_blocks_two import StackBlocksTwo
from mallvi.bench.tasks.stack_bowls_three import StackBowlsThree
from mallvi.bench.tasks.task_base import BenchTask

_TASK_CLASSES: tuple[type[BenchTask], ...] = (
    GroundingSparse,
    GroundingDense,
    GroundingCluttered,
    PlaceCansPlasticbox,
    BlocksCrossShape,
    BlocksRankingSize,
    BlocksRankingRgb,
    StackBlocksThree,
    StackBowlsThree,
    HandoverMic,
    HandoverBlock,
    HangingMug,
    PlaceBurgerFries,
    PlaceObjectBasket,
    PlaceBreadSkillet,
    BlocksTower,
    PutBottlesDustbin,
    PlaceObjectScale,
    PlaceBurgerFriesEE,
    PlaceBreadSkilletEE,
    GrabRoller,
    StackBlocksTwo,
)


def _build_registry(classes: tuple[type[BenchTask], ...]) -> dict[str, type[BenchTask]]:
    registry: dict[str, type[BenchTask]] = {}
    for cls in classes:
        if cls.name in registry:
            raise ValueError(f"task name {cls.name!r} registered twice ({registry[cls.name].__name__}, {cls.__name__})")
        registry[cls.name] = cls
    return registry


TASKS: dict[str, type[BenchTask]] = _build_registry(_TASK_CLASSES)


def get_task(name: str) -> BenchTask:
    """A fresh instance of a registered task; KeyError lists the known names."""
    try:
        return TASKS[name]()
    except KeyError:
        raise KeyError(f"unknown task {name!r}; known tasks: {', '.join(TASKS)}") from None


__all__ = ["TASKS", "BenchTask", "get_task"]
