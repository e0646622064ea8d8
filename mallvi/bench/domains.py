"""Each task's domain randomisation as the original benchmark configures it (data, one row per task).

The original's evaluation scripts run every task under a task config (``script/run_eval_*.py`` →
``task_config/<config>.yml``). All of them set ``random_background``, ``random_light``, ``random_table_height:
0.03``, ``clean_background_rate: 0.02`` and ``crazy_random_light_rate: 0.02``; they differ in
``cluttered_table``: off for the Tier 1 sparse and dense settings and for ``blocks_tower`` and
``blocks_cross_shape`` (``config_franka_0_6_clean``), on for every other Tier 2 and every Tier 3 task.

Per task below: the config name, and for a cluttered table the padding the original's task file puts around
its objects (``add_prohibit_area``) and its extra prohibited rectangles (targets). Ours adds, for every
manipulation task, the strip in front of the robot where the arms meet and hand over (our arms stand on the
table at y = -0.30, so their paths cross it) and the two pedestals. The table height offset (U[-0.03, 0] m)
is drawn by the world for every scene.
"""

from __future__ import annotations

from dataclasses import dataclass

from mallvi.bench.bench_config import RANDOMIZATIONS
from mallvi.sim_bridge.distractors import Area, ClutterSpec
from mallvi.sim_bridge.domain import DomainSpec, VisualSpec

PEDESTALS = (Area(-0.45, -0.34, -0.25, -0.20), Area(0.25, -0.34, 0.45, -0.20))
#: ours: the middle in front of the robot, where both arms reach, stack, hand over and relay
ARMS_MEET = Area(-0.22, -0.34, 0.22, 0.02)


@dataclass(frozen=True)
class _Row:
    config: str
    padding_m: float | None = None  # None = a clean table
    padding_by_name: tuple[tuple[str, float], ...] = ()
    targets: tuple[Area, ...] = ()  # the original's extra prohibited rectangles
    arms_meet: bool = True
    scene_clutter: bool = False  # the shared scene places the distractors itself (the same areas)


_RANKING_ROW = Area(-0.17, -0.22, 0.17, -0.12)
_STACK_SPOT = Area(-0.04, -0.13, 0.04, -0.05)

TASK_DOMAINS: dict[str, _Row] = {
    "grounding_sparse": _Row("config_spatial_clean"),
    "grounding_dense": _Row("config_spatial_clean"),
    "grounding_cluttered": _Row("config_spatial_cluttered", 0.05, targets=(_RANKING_ROW,), arms_meet=False,
                                scene_clutter=True),  # scenes.SPATIAL_CLUTTER
    "place_cans_plasticbox": _Row("config_arx_x5_0_7", 0.05, (("plasticbox", 0.10),)),
    "blocks_cross_shape": _Row("config_franka_0_6_clean"),
    "blocks_ranking_size": _Row("config_arx_x5_0_6", 0.10, targets=(Area(-0.27, -0.22, 0.27, -0.12),)),
    "blocks_ranking_rgb": _Row("config_franka_0_6", 0.05, targets=(_RANKING_ROW,)),
    "stack_blocks_three": _Row("config_arx_x5_0_7", 0.05, targets=(_STACK_SPOT,)),
    "stack_bowls_three": _Row("config_franka_0_7", 0.07, targets=(Area(-0.10, -0.15, 0.10, -0.05),)),
    "handover_mic": _Row("config_arx_x5_0_6", 0.07),
    "handover_block": _Row("config_arx_x5_0_7", 0.10),
    "hanging_mug": _Row("config_arx_x5_0_6", 0.10),
    "place_burger_fries": _Row("config_arx_x5_0_7", 0.05, (("tray", 0.10),)),
    "place_object_basket": _Row("config_franka_0_7", 0.05, (("toy", 0.10),)),
    "place_bread_skillet": _Row("config_franka_0_7", 0.05, (("bread", 0.03),)),
    "blocks_tower": _Row("config_franka_0_6_clean"),
    "put_bottles_dustbin": _Row("config_piper_0_7", 0.10, (("dustbin", 0.05),)),
    "place_object_scale": _Row("config_arx_x5_0_7", 0.05),
    "place_burger_fries_ee": _Row("config_arx_x5_0_7", 0.05, (("tray", 0.10),)),
    "place_bread_skillet_ee": _Row("config_franka_0_7", 0.05, (("bread", 0.03),)),
    "grab_roller": _Row("config_franka_0_7", 0.10),
    "stack_blocks_two": _Row("config_arx_x5_0_7", 0.07, targets=(_STACK_SPOT,)),
}


def task_domain(task: str, randomization: str = "original") -> DomainSpec:
    """The domain a task's scene runs with; ``randomization`` "none" gives a plain, uncluttered table.

    KeyError for a task without a row (every registered task has one; a test checks it).
    """
    if randomization not in RANDOMIZATIONS:
        raise ValueError(f"randomization must be one of {', '.join(RANDOMIZATIONS)}, got {randomization!r}")
    row = TASK_DOMAINS[task]
    if randomization == "none":
        return DomainSpec(profile="none", visual=None, clutter=None)
    clutter = None
    if row.padding_m is not None and not row.scene_clutter:
        clutter = ClutterSpec(padding_m=row.padding_m, padding_by_name=dict(row.padding_by_name),
                              work_areas=(*row.targets, *PEDESTALS, *((ARMS_MEET,) if row.arms_meet else ())))
    return DomainSpec(profile=row.config, visual=VisualSpec(), clutter=clutter)


def is_cluttered(task: str) -> bool:
    """Whether the original runs ``task`` on a cluttered table."""
    return TASK_DOMAINS[task].padding_m is not None
