"""Scripted, privileged Tier 2 solutions: one function per task, using only the benchmark's primitives."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mallvi.bench.agents.expert_ctx import ExpertContext, up, vec
from mallvi.bench.tasks.base import point, pos
from mallvi.robot_drivers.base import ArmSide

Script = Callable[[ExpertContext], None]


def _other(arm: ArmSide) -> ArmSide:
    return "right" if arm == "left" else "left"


def _targets_in_order(c: ExpertContext, order: list[str]) -> None:
    targets = c.task.hints(c.world)["targets"]
    for name in order:
        c.move_object(name, targets[name])


def _by_distance_to_centre(c: ExpertContext, names: list[str]) -> list[str]:
    return sorted(names, key=lambda n: abs(float(pos(c.world, n)[0])))


def stack_blocks_three(c: ExpertContext) -> None:
    z0 = c.world.table_top_z
    c.move_object("red_block", [0.0, -0.13, z0])
    for upper, lower in (("green_block", "red_block"), ("blue_block", "green_block")):
        base = pos(c.world, lower)
        c.move_object(upper, [base[0], base[1], base[2] + 0.05])


def blocks_ranking(c: ExpertContext) -> None:
    _targets_in_order(c, _by_distance_to_centre(c, list(c.task.hints(c.world)["targets"])))


def blocks_cross_shape(c: ExpertContext) -> None:
    _targets_in_order(c, ["black_block", "green_block", "yellow_block", "red_block", "blue_block"])


def place_cans_plasticbox(c: ExpertContext) -> None:
    targets = c.task.hints(c.world)["targets"]
    c.move_object("can_left", targets["can_left"], arms=["left"])
    c.move_object("can_right", targets["can_right"], arms=["right"])


def stack_bowls_three(c: ExpertContext) -> None:
    for upper, lower in (("bowl2", "bowl1"), ("bowl3", "bowl2")):
        base = pos(c.world, lower)
        c.move_object(upper, [base[0], base[1], base[2] + 0.012])


def place_burger_fries(c: ExpertContext) -> None:
    targets = c.task.hints(c.world)["targets"]
    c.move_object("burger", vec(np.add(targets["burger"], [0, 0, 0.005])), arms=["left"])
    c.move_object("fries", vec(np.add(targets["fries"], [0, 0, 0.005])), arms=["right"])


def place_bread_skillet(c: ExpertContext) -> None:
    target = point(c.world, "skillet", "center")
    c.move_object("bread", up(target, 0.01))


def place_object_basket(c: ExpertContext) -> None:
    toy_arm = c.near_arm("toy")
    target = point(c.world, "basket", "center")
    c.move_object("toy", up(target, 0.02), arms=[toy_arm], pre_dis=0.03, dis=0.0)
    basket_arm = _other(toy_arm)
    handle = 0 if basket_arm == "left" else 1
    if c.pick("basket", arms=[basket_arm], contact_point_id=handle) is not None:
        c.do("move_by_displacement", arm_tag=basket_arm, z=0.05)


def handover_mic(c: ExpertContext) -> None:
    giver = c.near_arm("microphone")
    receiver = _other(giver)
    z0 = c.world.table_top_z
    for cp in (0, 1, 2, 3):
        if c.pick("microphone", arms=[giver], contact_point_id=cp) is not None:
            break
    else:
        return
    c.place("microphone", giver, [0.0, -0.05, z0 + 0.12], is_open=False, pre_dis=0.0, dis=0.0)
    for cp in (4, 5, 6, 7):
        if c.do("grasp_actor", actor="microphone", arm_tag=receiver, contact_point_id=cp, pre_grasp_dis=0.08).ok:
            break
    c.do("open_gripper", arm_tag=giver)
    c.do("back_to_origin", arm_tag=giver)
    c.do("move_by_displacement", arm_tag=receiver, z=0.05)


def handover_block(c: ExpertContext) -> None:
    z0 = c.world.table_top_z
    if c.pick("red_block", arms=["left"]) is None:
        return
    c.place("red_block", "left", [0.0, -0.05, z0 + 0.08], is_open=False, pre_dis=0.0, dis=0.0)
    ok = False
    for cp in (4, 5, 6, 7, 8, 9, 10, 11):
        if c.do("grasp_actor", actor="red_block", arm_tag="right", contact_point_id=cp, pre_grasp_dis=0.08).ok:
            ok = True
            break
    if ok:
        c.do("open_gripper", arm_tag="left")
        c.do("back_to_origin", arm_tag="left")
    else:  # no mid-air grasp reachable: hand it over via the table's middle instead
        c.place("red_block", "left", [0.0, -0.05, z0])
        c.do("back_to_origin", arm_tag="left")
        if c.pick("red_block", arms=["right"]) is None:
            return
    c.place("red_block", "right", up(point(c.world, "blue_pad", "fp1"), 0.002))
    c.do("back_to_origin", arm_tag="right")


def hanging_mug(c: ExpertContext) -> None:
    """Put the mug in the middle with the left arm, then carry it so its handle meets the hook and let go."""
    c.move_object("mug", [0.0, -0.05, c.world.table_top_z], arms=["left"])
    arm = c.pick("mug", arms=["right"], contact_point_id=0)
    if arm is None:
        return
    offset = point(c.world, "mug", "handle") - point(c.world, "mug", "fp0")
    hook = point(c.world, "rack", "hook")
    c.place("mug", arm, up(hook - offset, -0.01), constrain="free")
    c.do("back_to_origin", arm_tag=arm)


def blocks_tower(c: ExpertContext) -> None:
    z0 = c.world.table_top_z
    tower_xy = (0.0, -0.12)
    for top in ("yellow_block", "green_block"):  # clear both columns
        p = pos(c.world, top)
        side = 1.0 if p[0] > 0 else -1.0
        c.move_object(top, [side * 0.25, float(np.clip(p[1] + 0.1, -0.15, 0.08)), z0])
    c.move_object("red_block", [*tower_xy, z0])
    for upper, lower in (("blue_block", "red_block"), ("yellow_block", "blue_block"), ("green_block", "yellow_block")):
        base = pos(c.world, lower)
        edge = c.world.objects[lower].size_m[2]
        c.move_object(upper, [base[0], base[1], base[2] + edge])


def put_bottles_dustbin(c: ExpertContext) -> None:
    drop = point(c.world, "dustbin", "drop")
    z0 = c.world.table_top_z
    names = sorted(("bottle1", "bottle2", "bottle3"), key=lambda n: float(pos(c.world, n)[0]))
    for name in names:
        if c.task.allocation_refusal(c.world, name, "left") is not None:  # too far right: pass it over
            c.move_object(name, [-0.02, -0.10, z0], arms=["right"])
        c.move_object(name, up(drop, 0.01), arms=["left"])


PLANNING_SCRIPTS: dict[str, Script] = {
    "place_cans_plasticbox": place_cans_plasticbox,
    "blocks_cross_shape": blocks_cross_shape,
    "blocks_ranking_size": blocks_ranking,
    "blocks_ranking_rgb": blocks_ranking,
    "stack_blocks_three": stack_blocks_three,
    "stack_bowls_three": stack_bowls_three,
    "handover_mic": handover_mic,
    "handover_block": handover_block,
    "hanging_mug": hanging_mug,
    "place_burger_fries": place_burger_fries,
    "place_object_basket": place_object_basket,
    "place_bread_skillet": place_bread_skillet,
    "blocks_tower": blocks_tower,
    "put_bottles_dustbin": put_bottles_dustbin,
}
