"""Scripted, privileged Tier 2 solutions: one function per task, using only the benchmark's primitives."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mallvi.bench.agents.expert_ctx import ExpertContext, up, vec
from mallvi.bench.agents.expert_handover import handover_block
from mallvi.bench.tasks.stack_blocks_three import STACK_CENTER_XY
from mallvi.bench.tasks.stack_bowls_three import BOWLS, MIN_SPACING_M
from mallvi.bench.tasks.task_base import point, pos
from mallvi.contracts.geometry import ArmSide

Script = Callable[[ExpertContext], None]
BREAD_RELAY_XY = (0.0, -0.12)  # where the bread waits for the skillet's arm when the pan cannot be moved
BASKET_NEAR_X_M = 0.035  # the toy's drop point from the basket's centre towards the toy's arm (reach)
#: the held toy's bottom above the basket's handles before it is lowered in, in order: the higher start leaves
#: the planner's margin pass room there (from the lower one the toy's way in can clip a handle bar)
BASKET_CLEAR_M = (0.035, 0.015)
CAN_PRE_DIS_M = (0.16, 0.1)  # a can is lowered into the box from this high above its spot, in order (metres)
#: under the original's semantics a place more than 0.1 m above the box's spot is refused: lower from just below
CAN_PRE_DIS_PAPER_M = 0.095
RELAY_CLEAR_M = 0.12  # the right arm slides this far off a relayed bottle's neck before homing
#: where the right arm may stand a bottle for the left arm, in order of preference (world x, y; metres)
RELAY_SPOTS_XY = ((-0.01, -0.13), (-0.01, -0.07), (0.02, -0.13), (-0.04, -0.10), (-0.01, -0.01),
                  (0.02, -0.04), (-0.04, -0.04))
RELAY_PRE_DIS_M = 0.03  # the relayed bottle is lowered onto its spot from this high
RELAY_ROOM_M = 0.17  # a relay spot this far from every bottle still on the table is taken at once
BIN_SPOTS_DY_M = (0.095, 0.0, -0.095)  # the bottles' spots in the bin, from its drop point along y, in order
#: a spot moved this far along x (the bin is 0.2 m deep) where the held bottle would meet one already in the bin
BIN_SPOT_DX_M = (0.0, -0.035, 0.035)
BIN_FLOOR_GAP_M = 0.005  # a bottle is let go this far above the bin's floor
BIN_RIM_CLEAR_M = 0.01  # ... after being lowered straight in from this far above the rim
BOWL_FRONT_XY = (0.0, -0.10)  # the first bowl's spot in front of the robot, where both arms reach (world x, y; m)


def _spots_around(centre_xy: tuple[float, float], reach_m: float = 0.06, n: int = 5) -> tuple[tuple[float, float], ...]:
    """An n × n grid of spots (world x, y; m) up to ``reach_m`` beside ``centre_xy`` either way, nearest first."""
    steps = np.linspace(-reach_m, reach_m, n)
    grid = ((centre_xy[0] + dx, centre_xy[1] + dy) for dx in steps for dy in steps)
    return tuple(sorted(grid, key=lambda s: math.dist(s, centre_xy)))


#: the spots the first bowl may go to, nearest the front one first: up to 6 cm beside it either way
BOWL_SPOTS_XY = _spots_around(BOWL_FRONT_XY)
#: the spots the block stack may stand on, nearest the task's centre first: up to 6 cm beside it either way
STACK_SPOTS_XY = _spots_around(STACK_CENTER_XY)
STACK_CLEAR_M = 0.12  # the stack's spot is this far (centres, xy) from the blocks still to go on it, where it can be
#: the left arm's grasps of the mug in order: the rim, the handle, then any (the first reachable, body included)
MUG_LEFT_GRASPS: tuple[dict[str, int], ...] = ({"contact_point_id": 0}, {"contact_point_id": 1}, {})
#: the mug's handle yaws tried from +y when it is set down in the middle (rad), in order
MUG_AWAY_TURNS_RAD = (0.0, math.pi / 6, -math.pi / 6)


def _other(arm: ArmSide) -> ArmSide:
    return "right" if arm == "left" else "left"


def _targets_in_order(c: ExpertContext, order: list[str]) -> None:
    targets = c.task.hints(c.world)["targets"]
    for name in order:
        c.move_object(name, targets[name])


def _by_distance_to_centre(c: ExpertContext, names: list[str]) -> list[str]:
    return sorted(names, key=lambda n: abs(float(pos(c.world, n)[0])))


def _stack_spot(c: ExpertContext, upper: Sequence[str]) -> tuple[float, float]:
    """Where the stack goes: the spot nearest the task's centre that stands ``STACK_CLEAR_M`` clear of the
    ``upper`` blocks (an arm taking a block 8 cm from the stack swept the top block off it); else the centre."""
    xy = [pos(c.world, n)[:2] for n in upper]
    for spot in STACK_SPOTS_XY:
        if all(math.dist(spot, (float(p[0]), float(p[1]))) >= STACK_CLEAR_M for p in xy):
            return spot
    return STACK_CENTER_XY


def stack_blocks_three(c: ExpertContext) -> None:
    z0 = c.world.table_top_z
    c.move_object("red_block", [*_stack_spot(c, ("green_block", "blue_block")), z0])
    for upper, lower in (("green_block", "red_block"), ("blue_block", "green_block")):
        base = pos(c.world, lower)
        c.move_object(upper, [base[0], base[1], base[2] + 0.05])


def blocks_ranking(c: ExpertContext) -> None:
    _targets_in_order(c, _by_distance_to_centre(c, list(c.task.hints(c.world)["targets"])))


def blocks_cross_shape(c: ExpertContext) -> None:
    _targets_in_order(c, ["black_block", "green_block", "yellow_block", "red_block", "blue_block"])


def place_cans_plasticbox(c: ExpertContext) -> None:
    """Each arm brings its can high above its corner of the box and lowers it straight down; else (no IK for
    that) place_actor lowers it along the grasp's approach, from the same heights."""
    targets = c.task.hints(c.world)["targets"]
    cans: tuple[tuple[str, ArmSide], ...] = (("can_left", "left"), ("can_right", "right"))
    for can, arm in cans:
        if c.pick(can, [arm]) is not None and not _lower_straight_in(c, can, arm, targets[can]):
            c.place_in_turn(can, arm, [(targets[can], {"pre_dis": d}) for d in CAN_PRE_DIS_M])


def _lower_straight_in(c: ExpertContext, can: str, arm: ArmSide, target: Sequence[float]) -> bool:
    """Carry the held can to ``CAN_PRE_DIS_M`` above ``target``, lower it straight down, let go, rise and go
    home; True once it is let go there. place_actor's own descent runs along the grasp's approach: with a grasp
    slanted 35°, a 16 cm descent comes in 9 cm sideways, and into a corner 6 mm from the walls from outside the
    box, the can's bottom met the rim and shoved the box from under it."""
    heights: tuple[float, ...] = CAN_PRE_DIS_M
    if c.semantics == "paper":  # the task refuses a place far above the box's spots: only heights it takes
        heights = tuple(h for h in heights if c.task.place_refusal(c.world, can, up(target, h)) is None) or (
            CAN_PRE_DIS_PAPER_M,)
    for height in heights:
        if c.holder(arm) != can:
            return False
        if not c.place(can, arm, up(target, height), is_open=False, pre_dis=0.0, dis=0.0):
            continue
        if c.do("move_by_displacement", arm_tag=arm, z=-height).ok:
            c.do("open_gripper", arm_tag=arm)
            c.do("move_by_displacement", arm_tag=arm, z=height)
            c.do("back_to_origin", arm_tag=arm)
            return True
    return False


def _bowl_base(c: ExpertContext) -> tuple[str, tuple[float, float]]:
    """The bowl to nest the others in and the spot it goes to first: the spot nearest the one in front of the
    robot (both arms reach it) where the other two bowls stand clear of it, the bowl nearest that spot first.
    The layout keeps bowls only 0.13 m from the front spot, and a 0.18 m bowl set down there lands on any bowl
    closer than 0.19 m (it flipped the neighbour over). Where no spot is clear, the front spot."""
    xy = {n: tuple(float(v) for v in pos(c.world, n)[:2]) for n in BOWLS}
    for spot in BOWL_SPOTS_XY:
        for first in sorted(BOWLS, key=lambda n: math.dist(xy[n], spot)):
            if all(math.dist(xy[n], spot) >= MIN_SPACING_M for n in BOWLS if n != first):
                return first, spot
    return min(BOWLS, key=lambda n: math.dist(xy[n], BOWL_FRONT_XY)), BOWL_FRONT_XY


def stack_bowls_three(c: ExpertContext) -> None:
    """Nest the bowls at a free spot in front of the robot (``_bowl_base``); any bowl may go first."""
    first, spot = _bowl_base(c)
    order = [first, *sorted((n for n in BOWLS if n != first), key=lambda n: math.dist(pos(c.world, n)[:2], spot))]
    c.move_object(first, [*spot, c.world.table_top_z])
    for lower, upper in pairwise(order):
        base = pos(c.world, lower)
        c.move_object(upper, [base[0], base[1], base[2] + 0.012])


def place_burger_fries(c: ExpertContext) -> None:
    targets = c.task.hints(c.world)["targets"]
    c.move_object("burger", vec(np.add(targets["burger"], [0, 0, 0.005])), arms=["left"])
    c.move_object("fries", vec(np.add(targets["fries"], [0, 0, 0.005])), arms=["right"])


def place_bread_skillet(c: ExpertContext) -> None:
    """The skillet's arm brings the pan by its handle to the middle, then the other arm puts the bread in. A pan
    whose handle is out of reach (far out and turned) stays: the bread goes to the middle of the table and the
    skillet's arm takes it from there into the pan."""
    pan_arm = c.near_arm("skillet")
    bread_arm = _other(pan_arm)
    moved = False
    if c.pick("skillet", arms=[pan_arm], contact_point_id=0) is not None:
        moved = c.place("skillet", pan_arm, c.task.hints(c.world)["skillet_target"])
        if not moved:
            c.do("open_gripper", arm_tag=pan_arm)
        c.do("back_to_origin", arm_tag=pan_arm)
    if moved and c.move_object("bread", up(point(c.world, "skillet", "center"), 0.01), arms=[bread_arm]):
        return
    if float(abs(pos(c.world, "bread")[0])) > BREAD_RELAY_XY[0] + 0.05:  # still on the bread arm's side
        c.move_object("bread", [*BREAD_RELAY_XY, c.world.table_top_z + 0.005], arms=[bread_arm])
    c.move_object("bread", up(point(c.world, "skillet", "center"), 0.01), arms=[pan_arm])


def place_object_basket(c: ExpertContext) -> None:
    toy_arm = c.near_arm("toy")
    basket_z = float(pos(c.world, "basket")[2])
    # drop it from just above the body's rim (make_basket: 0.12 m): fingers opened inside the basket snag it
    centre = point(c.world, "basket", "center")
    near_x = float(centre[0]) + (-1.0 if toy_arm == "left" else 1.0) * BASKET_NEAR_X_M  # its own half: reach
    target = [near_x, float(centre[1]), basket_z + 0.13]
    # the planner sees the basket as a solid box up to its handles: the toy comes down from above them
    top_z = basket_z + c.world.objects["basket"].size_m[2]
    if c.pick("toy", [toy_arm]) is not None:
        # the fingers open along the handle bars (along y): opened across them, one meets a bar and shoves the basket
        yaws = _yaws_with_fingers_along_y(c, "toy", toy_arm)
        placed = any(c.place("toy", toy_arm, target + _yaw_quat(yaw), pre_dis=top_z + clear - target[2], dis=0.0)
                     for clear in BASKET_CLEAR_M for yaw in yaws)  # fmt: skip
        if not placed and not c.place("toy", toy_arm, target, pre_dis=top_z + BASKET_CLEAR_M[-1] - target[2], dis=0.0):
            c.do("open_gripper", arm_tag=toy_arm)
        c.do("back_to_origin", arm_tag=toy_arm)
    basket_arm = _other(toy_arm)
    handle = 0 if basket_arm == "left" else 1
    if c.do("grasp_actor", actor="basket", arm_tag=basket_arm, contact_point_id=handle).ok:
        c.do("move_by_displacement", arm_tag=basket_arm, z=0.05)
    elif c.holder(basket_arm) == "basket":  # held, but the grasp's 0.05 m lift is out of reach: a smaller one
        for dz in (0.03, 0.025):
            if c.do("move_by_displacement", arm_tag=basket_arm, z=dz).ok:
                break


def _yaws_with_fingers_along_y(c: ExpertContext, name: str, arm: ArmSide) -> list[float]:
    """The two yaws (rad) of the held object ``name`` that turn the gripper's finger axis along world ±y."""
    world: Any = c.world  # privileged: the arm's end-effector frame and the object's pose
    finger = world.arms[arm].ee_pose().as_matrix()[:3, 1]
    T_obj = np.asarray(world.objects[name].pose.to_transformation_matrix())
    yaw_obj = math.atan2(T_obj[1, 0], T_obj[0, 0])
    yaw_fingers = math.atan2(float(finger[1]), float(finger[0]))
    return [yaw_obj + side - yaw_fingers for side in (math.pi / 2, -math.pi / 2)]


def handover_mic(c: ExpertContext) -> None:
    """The giver (the microphone's side) holds it low on the handle at the handover point; the microphone is
    turned there until the receiver reaches a grasp high on the handle (its reachable side depends on the turn)."""
    receiver: ArmSide = "left" if c.world.metadata["receiver"] == "left" else "right"
    giver = _other(receiver)
    z0 = c.world.table_top_z
    for cp in (0, 1, 2, 3):
        if c.pick("microphone", arms=[giver], contact_point_id=cp) is not None:
            break
    else:
        return
    # the turn that usually lets the receiver in first (mirrored per side), then the others
    turns_deg = (180, 90, -90, 0) if giver == "right" else (0, -90, 90, 180)
    taken = False
    for deg in turns_deg:
        yaw = math.radians(deg)
        target = [0.0, -0.05, z0 + 0.12, math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
        if not c.place("microphone", giver, target, is_open=False, pre_dis=0.0, dis=0.0, constrain="align"):
            continue
        for cp in (4, 5, 6, 7):
            if c.do("grasp_actor", actor="microphone", arm_tag=receiver, contact_point_id=cp, pre_grasp_dis=0.08).ok:
                taken = True
                break
        if taken:
            break
        c.do("back_to_origin", arm_tag=receiver)
    if not taken:
        return
    c.do("open_gripper", arm_tag=giver)
    c.do("back_to_origin", arm_tag=giver)
    c.do("move_by_displacement", arm_tag=receiver, z=0.05)


def _yaw_quat(yaw_rad: float) -> list[float]:
    return [math.cos(yaw_rad / 2), 0.0, 0.0, math.sin(yaw_rad / 2)]


def _put_mug_in_middle(c: ExpertContext, z0: float, only_away: bool) -> bool:
    """The held mug down in the middle with its handle to +y (away from the robot), else turned up to 30° from
    it (the handle's loop still crosses the hook's rod); unless ``only_away``, else to -y, else wherever the arm
    can put it there."""
    away = tuple(math.pi / 2 + d for d in MUG_AWAY_TURNS_RAD)
    for yaw in away if only_away else (*away, -math.pi / 2, None):
        if c.place("mug", "left", [0.0, -0.05, z0, *([] if yaw is None else _yaw_quat(yaw))]):
            return True
    return False


def _turn_mug_aside(c: ExpertContext, z0: float) -> bool:
    """Set the held mug down beside its start turned by a quarter or half turn (for a regrasp)."""
    q = c.world.objects["mug"].pose.q
    yaw_now = 2.0 * math.atan2(float(q[3]), float(q[0]))
    return any(
        c.place("mug", "left", [-0.14, -0.08, z0, *_yaw_quat(yaw_now + d)])
        for d in (math.pi / 2, -math.pi / 2, math.pi)
    )


def _pick_mug_left(c: ExpertContext) -> bool:
    """The left arm grasps the mug by its rim, else its handle, else across its body: the body (0.08 m) fills
    the open gripper (0.08 m), and the mug grasped across it from above at a slant stayed wedged between the
    fingers when they opened to set it down (it came away with the gripper)."""
    return any(c.pick("mug", arms=["left"], **kw) is not None for kw in MUG_LEFT_GRASPS)


def hanging_mug(c: ExpertContext) -> None:
    """The left arm turns the mug so its handle points to +y (the handle's opening then faces along the hook's
    rod) and puts it in the middle; the right arm holds it beyond the hook's tip and threads the handle onto the
    rod with a straight move along it, then lets go."""
    z0 = c.world.table_top_z
    if not _pick_mug_left(c):
        return
    for attempt in range(3):
        if _put_mug_in_middle(c, z0, only_away=False):
            break
        if attempt == 2 or not _turn_mug_aside(c, z0):  # regrasp it turned: the wrist reaches other yaws then
            c.do("open_gripper", arm_tag="left")
            break
        c.do("back_to_origin", arm_tag="left")
        if not _pick_mug_left(c):
            return
    c.do("back_to_origin", arm_tag="left")
    for attempt in range(2):
        # a rim grasp whose fingers nudge the mug out from between them: once more where it now stands
        if all(c.pick("mug", arms=["right"], contact_point_id=0) is None for _ in range(2)):
            return
        if _hang_held_mug(c):
            c.do("open_gripper", arm_tag="right")
            c.do("move_by_displacement", arm_tag="right", z=0.03)
            c.do("back_to_origin", arm_tag="right")
            return
        # neither way onto the hook from this grasp: set the mug down in the middle half a turn round, take it again
        if attempt == 1 or c.holder("right") != "mug" or not _mug_down_turned(c, z0):
            break
        c.do("back_to_origin", arm_tag="right")
    if c.holder("right") == "mug":
        c.do("open_gripper", arm_tag="right")
    c.do("back_to_origin", arm_tag="right")


def _hang_held_mug(c: ExpertContext) -> bool:
    """The right arm (holding the mug) brings its handle beyond the hook's tip, as held or turned so the handle
    points to the rod's other side, and threads it onto the rod with a straight move along it; True once there."""
    hook, tip = point(c.world, "rack", "hook"), point(c.world, "rack", "hook_tip")
    along = (tip - hook) / float(np.linalg.norm(tip - hook))  # unit vector out along the rod
    start = hook + 0.085 * along  # the handle clear of the rack (the planner sees it as its bounding box)
    for turned in (False, True):
        if c.holder("right") != "mug":
            return False
        offset = point(c.world, "mug", "handle") - point(c.world, "mug", "fp0")
        if turned:
            at_start = _mug_turned_to_hook_start(c, start, offset)
        else:
            at_start = c.place("mug", "right", vec(start - offset), constrain="free", pre_dis=0.0, dis=0.0,
                               is_open=False)  # fmt: skip
        if not at_start:
            continue
        dx, _, dz = vec(hook - point(c.world, "mug", "handle"))
        if c.do("move_by_displacement", arm_tag="right", x=dx, z=dz).ok:
            return True
    return False


def _mug_down_turned(c: ExpertContext, z0: float) -> bool:
    """Set the mug the right arm holds down in the middle turned by half a turn (else a quarter either way)."""
    q = c.world.objects["mug"].pose.q
    yaw_now = 2.0 * math.atan2(float(q[3]), float(q[0]))
    return any(c.place("mug", "right", [0.03, -0.05, z0, *_yaw_quat(yaw_now + d)])
               for d in (math.pi, math.pi / 2, -math.pi / 2))  # fmt: skip


def _mug_turned_to_hook_start(c: ExpertContext, start: NDArray[np.float64], offset: NDArray[np.float64]) -> bool:
    """The held mug's handle to ``start``, the mug turned on the way so its handle points to the other side of
    the rod (``offset``: handle minus bottom now); the mug body then hangs on the arm's reachable side."""
    yaw_handle = math.atan2(float(offset[1]), float(offset[0]))
    turn = math.remainder(math.copysign(math.pi / 2, -float(offset[1])) - yaw_handle, 2 * math.pi)
    q = c.world.objects["mug"].pose.q
    yaw_mug = 2.0 * math.atan2(float(q[3]), float(q[0]))
    cz, sz = math.cos(turn), math.sin(turn)
    turned = np.array([cz * offset[0] - sz * offset[1], sz * offset[0] + cz * offset[1], offset[2]])
    target = vec(start - turned) + _yaw_quat(yaw_mug + turn)
    return c.place("mug", "right", target, constrain="align", pre_dis=0.0, dis=0.0, is_open=False)


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


def _pick_by_points(c: ExpertContext, name: str, arm: ArmSide, cps: tuple[int, ...]) -> bool:
    """Grasp ``name`` with ``arm`` at the first of the contact points ``cps`` that works; home the arm if none."""
    for cp in cps:
        if c.do("grasp_actor", actor=name, arm_tag=arm, contact_point_id=cp, pre_grasp_dis=0.06).ok:
            return True
    c.do("back_to_origin", arm_tag=arm)
    return False


def _slide_off(c: ExpertContext, arm: ArmSide, dist_m: float) -> None:
    """Move the open gripper ``dist_m`` horizontally across its finger axis, towards the robot if it can (else
    away): both fingers pass beside what stood between them. Rising off a tall object is out of reach."""
    world: Any = c.world  # privileged: the arm's end-effector frame
    finger_axis = world.arms[arm].ee_pose().as_matrix()[:3, 1]
    across = np.cross(finger_axis, [0.0, 0.0, 1.0])
    if float(np.linalg.norm(across)) < 0.5:
        return
    across = across / float(np.linalg.norm(across)) * (1.0 if across[1] <= 0 else -1.0)
    for sign in (1.0, -1.0):
        d = sign * dist_m * across
        if c.do("move_by_displacement", arm_tag=arm, x=float(d[0]), y=float(d[1])).ok:
            return


def _put_down(c: ExpertContext, name: str, arm: ArmSide, target: list[float], pre_dis: float,
              clear_m: float = 0.0) -> bool:
    """Place ``name`` at ``target``; on a failed place let go there rather than carry it on. Homes the arm, first
    sliding ``clear_m`` off it when asked (fingers around a bottle's neck: the way home would sweep it over)."""
    ok = c.place(name, arm, target, pre_dis=pre_dis, dis=0.0)
    if not ok:
        c.do("open_gripper", arm_tag=arm)
    if clear_m > 0.0:
        _slide_off(c, arm, clear_m)
    c.do("back_to_origin", arm_tag=arm)
    return ok


def _neck_grasp(c: ExpertContext, name: str, arm: ArmSide, stand_xy: tuple[float, float]) -> bool:
    """Hold bottle ``name`` top-down by its neck; a bottle whose neck is out of reach from above is first
    side-grasped and stood at ``stand_xy``, where it is."""
    neck = (4, 5)
    if _pick_by_points(c, name, arm, neck):
        return True
    if c.pick(name, arms=[arm]) is None:
        return False
    _put_down(c, name, arm, [*stand_xy, c.world.table_top_z + 0.005], pre_dis=0.0)
    return _pick_by_points(c, name, arm, neck)


def _relay_spot(c: ExpertContext, name: str, z_m: float) -> tuple[float, float]:
    """The first of ``RELAY_SPOTS_XY`` where the right arm can set ``name`` down and which is at least
    ``RELAY_ROOM_M`` from every other bottle still on the table (the carry there, the slide off it and the left arm's
    grasp there sweep that far), else the reachable one farthest from them."""
    bin_xy = pos(c.world, "dustbin")[:2]
    standing = [pos(c.world, n)[:2] for n in ("bottle1", "bottle2", "bottle3")
                if n != name and float(np.linalg.norm(pos(c.world, n)[:2] - bin_xy)) > 0.2]

    def room(xy: tuple[float, float]) -> float:
        return min((float(np.linalg.norm(np.subtract(xy, b))) for b in standing), default=math.inf)

    spots = [xy for xy in RELAY_SPOTS_XY if c.can_place(name, "right", [*xy, z_m], RELAY_PRE_DIS_M, 0.0)]
    if not spots:
        return RELAY_SPOTS_XY[0]
    return next((xy for xy in spots if room(xy) >= RELAY_ROOM_M), max(spots, key=room))


def put_bottles_dustbin(c: ExpertContext) -> None:
    """Top-down neck grasps (a side-grasped bottle over the rim is out of reach). The left arm takes the bottles
    on its side of the centre line; the right arm relays the others, nearest first, through the middle of the table."""
    drop = point(c.world, "dustbin", "drop")
    z0 = c.world.table_top_z
    relay_xy = RELAY_SPOTS_XY[0]
    by_x = sorted(("bottle1", "bottle2", "bottle3"), key=lambda n: float(pos(c.world, n)[0]))
    # the right arm's bottles nearest the relay spot first: a carry to it, or the way home from it, sweeps a bottle
    # still standing between the spot and the arm
    right = sorted((n for n in by_x if float(pos(c.world, n)[0]) > 0.0),
                   key=lambda n: float(np.hypot(*(pos(c.world, n)[:2] - relay_xy))))  # fmt: skip
    names = [n for n in by_x if n not in right] + right
    # one spot each, 0.095 m apart (bottles up to 0.086 m wide; one on another topples out), the back one first:
    # the front one lies under the left arm's home pose, whose fingers would meet a bottle standing there
    floor_z = float(point(c.world, "dustbin", "center")[2])
    spots = [[float(drop[0]), float(drop[1]) + dy, floor_z + BIN_FLOOR_GAP_M] for dy in BIN_SPOTS_DY_M]
    for name in names:
        if name in right or not _neck_grasp(c, name, "left", (-0.15, -0.08)):
            if not _neck_grasp(c, name, "right", (0.15, -0.10)):
                continue
            relay = _relay_spot(c, name, z0 + 0.005)
            _put_down(c, name, "right", [*relay, z0 + 0.005], pre_dis=RELAY_PRE_DIS_M, clear_m=RELAY_CLEAR_M)
            if not _pick_by_points(c, name, "left", (4, 5)):
                continue
        _into_bin(c, name, spots.pop(0))


def _into_bin(c: ExpertContext, name: str, spot: Sequence[float]) -> None:
    """The left arm lowers bottle ``name`` into the bin from above its rim and sets it down at ``spot``, or, where
    the held bottle meets one already standing there (the planner finds no pose or path), at the spot moved along
    x; else lets go where it is. (A bottle let go above the rim falls ~7 cm and can come to rest leaning towards
    the next spot, leaving the last bottle no room there: 830098.)"""
    pre = float(point(c.world, "dustbin", "drop")[2]) + BIN_RIM_CLEAR_M - spot[2]
    c.place_in_turn(name, "left", [([spot[0] + dx, spot[1], spot[2]], {"pre_dis": pre, "dis": 0.0})
                                   for dx in BIN_SPOT_DX_M])  # fmt: skip


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
