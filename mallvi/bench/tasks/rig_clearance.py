"""Whether a sampled object footprint stays clear of our arm pedestals.

Our arms stand on 0.14 m square pedestals on the table at y = -0.30 (``layout``); the original's arms stand off
the table, so its layout ranges reach table space that our pedestals take. An object spawned inside a pedestal
is thrown by the physics at the first step, so a sampler redraws such a pose (same ranges, same distribution
over the free table).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from mallvi.contracts.geometry import ARM_SIDES
from mallvi.sim_bridge import layout


def in_pedestal(x_m: float, y_m: float, arm_spacing_m: float, margin_m: float = 0.005) -> bool:
    """Whether the table point (x, y) lies within ``margin_m`` of either arm's pedestal."""
    half = layout.PEDESTAL_HALF_WIDTH_M + margin_m
    for side in ARM_SIDES:
        bx, by, _ = layout.arm_base_position(side, arm_spacing_m)
        if abs(x_m - bx) <= half and abs(y_m - by) <= half:
            return True
    return False


def clear_of_pedestals(points_xy: Iterable[tuple[float, float]], arm_spacing_m: float, margin_m: float = 0.005) -> bool:
    """Whether every footprint point (world x, y in metres) is clear of both pedestals."""
    return not any(in_pedestal(x, y, arm_spacing_m, margin_m) for x, y in points_xy)


def disc_outline(cx_m: float, cy_m: float, radius_m: float, n: int = 24) -> list[tuple[float, float]]:
    """``n`` points on a circle of ``radius_m`` round (cx, cy)."""
    return [
        (cx_m + radius_m * math.cos(2 * math.pi * k / n), cy_m + radius_m * math.sin(2 * math.pi * k / n))
        for k in range(n)
    ]


def bar_outline(
    cx_m: float, cy_m: float, yaw_rad: float, start_m: float, end_m: float, half_width_m: float, step_m: float = 0.01
) -> list[tuple[float, float]]:
    """Points along both long edges of a bar from ``start_m`` to ``end_m`` out from (cx, cy) along ``yaw_rad``."""
    c, s = math.cos(yaw_rad), math.sin(yaw_rad)
    n = max(2, math.ceil((end_m - start_m) / step_m) + 1)
    out: list[tuple[float, float]] = []
    for k in range(n):
        t = start_m + (end_m - start_m) * k / (n - 1)
        for w in (-half_width_m, half_width_m):
            out.append((cx_m + t * c - w * s, cy_m + t * s + w * c))
    return out
