"""Scripted, privileged Tier 3 solutions: 16-dim end-effector actions computed from simulator truth."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mallvi.bench.agents.expert_ctx import ExpertContext, up
from mallvi.bench.tasks.base import point, pos
from mallvi.robot_drivers.base import ArmSide, Pose

Script = Callable[[ExpertContext], None]
LIFT_M = 0.10


class Hands:
    """The commanded pose ([x, y, z, qw, qx, qy, qz]) and gripper of each arm; ``send`` issues one action."""

    def __init__(self, c: ExpertContext) -> None:
        self.c = c
        world: Any = c.world  # the expert is privileged: it reads the simulator's arms directly
        self.tcp_m = float(world.embodiment.tcp_offset_m)
        self.pose: dict[ArmSide, list[float]] = {s: world.arms[s].ee_pose().as_list() for s in ("left", "right")}
        self.grip: dict[ArmSide, float] = {s: 1.0 for s in ("left", "right")}

    def send(self) -> bool:
        a = [*self.pose["left"], self.grip["left"], *self.pose["right"], self.grip["right"]]
        return self.c.ee(a).ok

    def ee_for_grasp(self, obj: str, cp: str, back_m: float) -> list[float]:
        """EE pose that puts the grasp centre ``back_m`` behind the object's grasp frame ``cp``."""
        T = np.asarray(self.c.world.objects[obj].point_world(cp).to_transformation_matrix())
        p = T[:3, 3] - (self.tcp_m + back_m) * T[:3, 0]
        return Pose.from_matrix(_with_p(T, p)).as_list()

    def shift(self, arm: ArmSide, d: NDArray[np.float64] | list[float]) -> None:
        self.pose[arm] = [*(np.asarray(self.pose[arm][:3]) + np.asarray(d)).tolist(), *self.pose[arm][3:]]


def _with_p(T: NDArray[np.float64], p: NDArray[np.float64]) -> NDArray[np.float64]:
    out = T.copy()
    out[:3, 3] = p
    return out


def _grasp(h: Hands, arm: ArmSide, obj: str, cp: str) -> bool:
    h.grip[arm] = 1.0
    h.pose[arm] = h.ee_for_grasp(obj, cp, 0.10)
    if not h.send():
        return False
    h.pose[arm] = h.ee_for_grasp(obj, cp, 0.0)
    if not h.send():
        return False
    h.grip[arm] = 0.0
    if not h.send():
        return False
    h.shift(arm, [0.0, 0.0, LIFT_M])
    return h.send()


def _carry_to(h: Hands, arm: ArmSide, obj: str, target_fp0: NDArray[np.float64], release: bool = True) -> bool:
    """Move the held object so its bottom centre reaches ``target_fp0`` (from above), then let go and rise."""
    d = np.asarray(target_fp0) - point(h.c.world, obj, "fp0")
    h.shift(arm, np.asarray(up(d, LIFT_M)))
    if not h.send():
        return False
    h.shift(arm, [0.0, 0.0, -LIFT_M + 0.005])
    if not h.send() or not release:
        return True
    h.grip[arm] = 1.0
    h.send()
    h.shift(arm, [0.0, 0.0, LIFT_M])
    return h.send()


def _near(c: ExpertContext, obj: str) -> ArmSide:
    return "left" if pos(c.world, obj)[0] < 0 else "right"


def _best_cp(c: ExpertContext, obj: str) -> str:
    """The top-down grasp frame whose finger axis is closest to world x (easiest wrist pose)."""
    cps = [k for k in c.world.objects[obj].local_points if k.startswith("cp")]
    best, best_score = cps[0], -1.0
    for k in cps:
        T = np.asarray(c.world.objects[obj].point_world(k).to_transformation_matrix())
        if T[2, 0] > -0.9:  # not approaching from above
            continue
        score = abs(float(T[0, 1]))
        if score > best_score:
            best, best_score = k, score
    return best


def stack_blocks_two(c: ExpertContext) -> None:
    h = Hands(c)
    z0 = c.world.table_top_z
    first, second = sorted(("red_block", "green_block"), key=lambda n: abs(float(pos(c.world, n)[0])))
    arm = _near(c, first)
    if _grasp(h, arm, first, _best_cp(c, first)):
        _carry_to(h, arm, first, np.array([0.0, -0.13, z0]))
    arm2 = _near(c, second)
    if _grasp(h, arm2, second, _best_cp(c, second)):
        _carry_to(h, arm2, second, np.asarray(up(pos(c.world, first), 0.05)))


def grab_roller(c: ExpertContext) -> None:
    h = Hands(c)
    for back in (0.10, 0.0):
        h.pose["left"] = h.ee_for_grasp("roller", "cp0", back)
        h.pose["right"] = h.ee_for_grasp("roller", "cp1", back)
        h.send()
    h.grip["left"] = h.grip["right"] = 0.0
    h.send()
    h.shift("left", [0.0, 0.0, LIFT_M])
    h.shift("right", [0.0, 0.0, LIFT_M])
    h.send()


def place_object_scale(c: ExpertContext) -> None:
    h = Hands(c)
    arm = _near(c, "object")
    if _grasp(h, arm, "object", _best_cp(c, "object")):
        _carry_to(h, arm, "object", np.asarray(up(point(c.world, "scale", "top"), 0.002)))


def place_burger_fries_ee(c: ExpertContext) -> None:
    h = Hands(c)
    for obj, arm, drop in (("burger", "left", "drop_left"), ("fries", "right", "drop_right")):
        side: ArmSide = "left" if arm == "left" else "right"
        if _grasp(h, side, obj, _best_cp(c, obj)):
            _carry_to(h, side, obj, np.asarray(up(point(c.world, "tray", drop), 0.005)))


def place_bread_skillet_ee(c: ExpertContext) -> None:
    """Lift the skillet by its handle and hold it; drop the bread into it with the other arm."""
    h = Hands(c)
    pan_arm = _near(c, "skillet")
    bread_arm: ArmSide = "right" if pan_arm == "left" else "left"
    if not _grasp(h, pan_arm, "skillet", "cp0"):
        return
    if _grasp(h, bread_arm, "bread", _best_cp(c, "bread")):
        _carry_to(h, bread_arm, "bread", np.asarray(up(point(c.world, "skillet", "center"), 0.03)))


FINE_SCRIPTS: dict[str, Script] = {
    "place_object_scale": place_object_scale,
    "place_burger_fries_ee": place_burger_fries_ee,
    "place_bread_skillet_ee": place_bread_skillet_ee,
    "grab_roller": grab_roller,
    "stack_blocks_two": stack_blocks_two,
}
