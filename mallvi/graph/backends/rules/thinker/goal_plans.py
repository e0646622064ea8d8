"""Skill calls for the goals beyond a plain pick and place: into a container (at a spot of its own, lowered
straight in), onto a surface's drop point, to the centre of the workspace, a cross's slots, a mid-air handover,
hanging onto a hook, turning an object's handle, and lifting a held object.

Each planner reads only the subtask, the localised objects and the scene memory (sizes, named points, grasp
frames; ``features.py``) and the Station's reach and table height; none of them knows a task. Where a motion may
not be plannable from one pose, a call carries ``alternatives`` (other targets or grasps) that the Actor tries
in turn before anything moves; where a whole attempt fails, the next attempt starts one alternative further.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TypeVar

import numpy as np

from mallvi.graph.agent_errors import AgentError
from mallvi.graph.backends.rules.thinker import features as ft
from mallvi.graph.binding import WORK_CENTRE_XY_M
from mallvi.graph.schemas import CallVariant, SceneMemory, SceneObject, SkillCall, Subtask

T = TypeVar("T")
CROSS_PITCH_M = 0.12  # a cross's arm: a block's width and a gripper's between neighbours
RIM_CLEAR_M = 0.015  # an object lowered into a container passes this far above its rim (or handles)
RELEASE_GAP_M = 0.005  # ... and is let go this far above the container's floor
SHORT_DROPS_M = (0.03, 0.06)  # ... else this much higher, where the arm cannot reach down so far
WALL_M = 0.01  # a container's wall, taken off its inner size
CELL_MARGIN_M = 0.005  # an object in a row of cells keeps this much more from the walls
NEAR_ARM_M = 0.035  # where the arm cannot reach a container's centre, it tries this much nearer its side
NEST_RATIO = 0.8  # an object at least this wide as a container's inside nests in it (rests on its walls)
NEST_GAP_M = 0.012  # a nested object's bottom is placed this far above the lower one's bottom ...
NEST_PRE_M = 0.10  # ... by a descent from this far above that ...
NEST_LET_GO_M = 0.02  # ... which lets go this far short of it
SPOT_CLEAR_M = 0.02  # a free spot keeps this far from every other object's box
SPOT_STEPS_M = (0.0, 0.03, -0.03, 0.06, -0.06)
SPOT_STEPS_FAR_M = (0.09, -0.09, 0.12, -0.12)  # farther steps along one line (the centre: nearer or farther only)
HANDOVER_BOTTOM_M = (0.10, 0.14, 0.07)  # the held object's bottom above the table at the hand-over, in order
HANDOVER_XY_M = ((0.0, -0.05), (0.04, -0.06), (-0.04, -0.06), (0.0, -0.10))
HANDOVER_YAWS_RAD = (0.0, math.pi / 2, -math.pi / 2, math.pi)
HANDOVER_GAP_M = 0.05  # the receiver's grasp is at least this far (along the object) from the giver's
TAKE_PRE_GRASP_M = 0.08
ASKEW_DEG = 20.0  # a held object turned this far from its first-seen posture is set down and taken again
SET_DOWN_FROM_ATTEMPT = 2  # (0-based) before it, an askew object is offered again: another pose often reaches it
HOOK_START_M = 0.085  # the handle is brought this far out along the hook's rod before it is threaded on
HANG_RISE_M = 0.03
HANG_YAW_TOL_RAD = math.radians(35.0)  # a handle this near across the rod is threaded on as held; else turned first
TURN_OFFSETS_RAD = (0.0, math.pi / 6, -math.pi / 6)
CENTRE_Y_STEPS_M = (0.0, 0.05, 0.10, 0.15)  # the centre spot, then farther from the robot, where the arm reaches
TURN_PRE_DIS_M = 0.05
LIFT_STEPS_M = (0.05, 0.03, 0.025)
SLIDE_OFF_M = 0.12  # an open gripper around a tall object's neck slides this far off it, across its fingers
DOWN = [1.0, 0.0, 0.0, 0.0]
#: world yaws an object held from above may be turned to about its axis before it is set down
PLACE_YAWS_RAD = tuple(k * math.pi / 4 for k in (2, -2, 4, 1, -1, 3, -3, 0))


def _call(skill: str, arm: str, obj: str | None = None, target: Sequence[float] | None = None,
          alternatives: Sequence[CallVariant] = (), **args: float | int | str | bool | None) -> SkillCall:
    return SkillCall(skill=skill, arm=arm, object=obj,  # type: ignore[arg-type]
                     target_pose=[float(v) for v in target] if target is not None else None, args=dict(args),
                     alternatives=list(alternatives))


def grasp_call(arm: str, obj: SceneObject, cps: Sequence[int] = (), pre_grasp_dis: float | None = None) -> SkillCall:
    """grasp_actor on the first of ``cps`` (the others as alternatives); no ``cps``: the skill's own choice."""
    args: dict[str, float | int | str | bool | None] = {}
    if pre_grasp_dis is not None:
        args["pre_grasp_dis"] = pre_grasp_dis
    if not cps:
        return SkillCall(skill="grasp_actor", arm=arm, object=obj.id, args=args)  # type: ignore[arg-type]
    return SkillCall(skill="grasp_actor", arm=arm, object=obj.id,  # type: ignore[arg-type]
                     args={**args, "contact_point_id": cps[0]},
                     alternatives=[CallVariant(args={"contact_point_id": c}) for c in cps[1:]])


def slide_off(arm: str, obj: SceneObject, cp: int) -> list[SkillCall]:
    """After letting go of ``obj`` held from above by grasp ``cp``: slide the open gripper ``SLIDE_OFF_M`` across
    its fingers, towards the robot where the arm can (else away), so that going home does not sweep a tall object
    over. Nothing for a grasp that is not from above (the retreat along the grasp clears it)."""
    g = next((g for g in ft.grasps(obj) if g.cp == cp), None)
    if g is None or not g.top_down:
        return []
    across = np.cross(np.asarray(g.fingers_m), [0.0, 0.0, 1.0])[:2]
    n = float(np.linalg.norm(across))
    if n < 0.5:
        return []
    across = across / n * (1.0 if across[1] <= 0 else -1.0) * SLIDE_OFF_M
    return [_call("move_by_displacement", arm, x=float(across[0]), y=float(across[1]),
                  alternatives=[CallVariant(args={"x": float(-across[0]), "y": float(-across[1])})])]


def rotate(items: Sequence[T], k: int) -> list[T]:
    """``items`` starting at index ``k`` (mod its length): a retry starts one alternative further."""
    if not items:
        return []
    k %= len(items)
    return [*items[k:], *items[:k]]


def yaw_quat(yaw: float) -> list[float]:
    return [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]


def others(obj_id: str, scene: SceneMemory, localized: dict[str, SceneObject], *skip: str) -> list[SceneObject]:
    """Every other object the graph knows (localised ones where they are now)."""
    seen = {o.id: o for o in scene.objects}
    seen.update(localized)
    return [o for k, o in seen.items() if k != obj_id and k not in skip]


def free_spot(centre_xy: tuple[float, float], obj: SceneObject, around: Sequence[SceneObject],
              sideways: bool = True) -> tuple[float, float]:
    """The spot nearest ``centre_xy`` (on a 3 cm grid, up to 6 cm off; ``sideways=False``: in world y only, up to
    12 cm off) where ``obj`` keeps ``SPOT_CLEAR_M`` from every object in ``around``; the centre itself when none is
    clear."""
    r = ft.width_m(obj) / 2
    steps_x, steps_y = (SPOT_STEPS_M, SPOT_STEPS_M) if sideways else ((0.0,), SPOT_STEPS_M + SPOT_STEPS_FAR_M)
    spots = sorted(((centre_xy[0] + dx, centre_xy[1] + dy) for dx in steps_x for dy in steps_y),
                   key=lambda s: math.dist(s, centre_xy))
    for s in spots:
        if all(math.dist(s, o.position_m[:2]) >= r + ft.width_m(o) / 2 + SPOT_CLEAR_M
               for o in around):
            return s
    return centre_xy


def centre_target(obj: SceneObject, scene: SceneMemory, localized: dict[str, SceneObject],
                  table_z: float) -> tuple[float, float, float]:
    """Where "the centre of the table" is for ``obj``: a free spot at the work centre, on the table, midway between
    the arms (a free spot is looked for nearer or farther, never to a side)."""
    x, y = free_spot(WORK_CENTRE_XY_M, obj, others(obj.id, scene, localized), sideways=False)
    return (x, y, table_z)


def cross_slot(slot: int) -> tuple[float, float]:
    """A cross's slot (0 centre, 1 left, 2 right, 3 far, 4 near) about the work centre (world x, y)."""
    cx, cy = WORK_CENTRE_XY_M
    dx, dy = ((0, 0), (-1, 0), (1, 0), (0, 1), (0, -1))[slot]
    return (cx + dx * CROSS_PITCH_M, cy + dy * CROSS_PITCH_M)


def container_spot(box: SceneObject, obj: SceneObject, slot: int | None, n: int, arm: str) -> tuple[float, float]:
    """Where in ``box`` the object goes: with ``n`` objects to put in, cell ``slot`` along its longer side, the far
    cells first; a single object at its centre."""
    cx, cy = box.position_m[0], box.position_m[1]
    floor_centre = ft.point(box, "center")
    if floor_centre is not None:
        cx, cy = floor_centre[0], floor_centre[1]
    if slot is None or n <= 1:
        return (cx, cy)
    size = box.size_m  # the world-aligned extent: its longer side is the row's direction
    long_axis = np.array([1.0, 0.0]) if size[0] >= size[1] else np.array([0.0, 1.0])
    half = max(size[0], size[1]) / 2 - WALL_M - ft.width_m(obj) / 2 - CELL_MARGIN_M
    offsets = np.linspace(half, -half, n) if n > 1 else np.zeros(1)
    off = float(offsets[min(slot, n - 1)])
    return (cx + off * float(long_axis[0]), cy + off * float(long_axis[1]))


def lower_into(arm: str, obj: SceneObject, spot_xy: tuple[float, float], floor_z: float,
               rim_z: float, toward_arm_m: float = 0.0) -> list[SkillCall]:
    """Carry the held object above ``spot_xy``, clear of the rim, lower it straight down to just above the floor,
    let go, rise and go home. Where the arm cannot get above the spot, it tries higher, then ``toward_arm_m``
    nearer its own side; where it cannot reach down to the floor, it lets go ``SHORT_DROPS_M`` higher (the
    object drops the rest inside the container)."""
    above = rim_z + RIM_CLEAR_M
    drop = above - (floor_z + RELEASE_GAP_M)
    sign = -1.0 if arm == "left" else 1.0
    higher = [CallVariant(target_pose=[spot_xy[0] + sign * dx, spot_xy[1], above + dz])
              for dx in (0.0, toward_arm_m) for dz in (0.0, 0.03, 0.06) if dx or dz]
    return [
        _call("place_actor", arm, obj.id, [spot_xy[0], spot_xy[1], above], alternatives=higher,
              functional_point_id=0, pre_dis=0.0, dis=0.0, is_open=False, constrain="free"),
        _call("move_by_displacement", arm, z=-drop,
              alternatives=[CallVariant(args={"z": -(drop - s)}) for s in SHORT_DROPS_M if drop - s >= 0.01]),
        _call("open_gripper", arm),
        _call("move_by_displacement", arm, z=min(drop, 0.12),
              alternatives=[CallVariant(args={"z": r}) for r in (0.06, 0.03) if r < min(drop, 0.12)]),
        _call("back_to_origin", arm),
    ]


def into_container(arm: str, obj: SceneObject, box: SceneObject, subtask: Subtask, holding: bool,
                   grasp: Sequence[int] = ()) -> list[SkillCall]:
    """Grasp (unless held) and lower ``obj`` into ``box`` at its spot. An object as wide as the container (a bowl
    into a bowl) nests (``nest_into``)."""
    spot = container_spot(box, obj, subtask.slot, len(subtask.group), arm)
    calls = [] if holding else [grasp_call(arm, obj, grasp)]
    inner = min((box.box_m or box.size_m)[:2]) - 2 * WALL_M
    nests = max((obj.box_m or obj.size_m)[:2]) >= NEST_RATIO * inner
    if nests:
        return calls + nest_into(arm, obj, spot, ft.bottom_z(box) + NEST_GAP_M)
    floor = ft.floor_z(box)
    by_top = {g.cp for g in ft.grasps(obj) if g.top_down}
    if grasp and set(grasp) <= by_top:  # held from above: the place's own descent along the grasp is straight down
        return calls + descend_into(arm, obj, spot, floor, ft.top_z(box))
    return calls + lower_into(arm, obj, spot, floor, ft.top_z(box), toward_arm_m=NEAR_ARM_M)


def nest_into(arm: str, obj: SceneObject, spot_xy: tuple[float, float], bottom_z: float) -> list[SkillCall]:
    """Nest a held object in one as wide (a bowl in a bowl): the place's own descent from ``NEST_PRE_M`` above
    brings its bottom to ``NEST_LET_GO_M`` above ``bottom_z`` and lets go there, so the hand stays clear of the
    lower rim and the object settles on the walls. Where the arm cannot, the object is turned about its axis, then
    the descent starts lower."""
    target = [spot_xy[0], spot_xy[1], bottom_z]
    others = [CallVariant(target_pose=[*target, *yaw_quat(yaw)], args={"constrain": "align"}) for yaw in PLACE_YAWS_RAD]
    others += [CallVariant(args={"pre_dis": p}) for p in (0.06, 0.03)]
    return [_call("place_actor", arm, obj.id, target, alternatives=others, functional_point_id=0,
                  pre_dis=NEST_PRE_M, dis=NEST_LET_GO_M, constrain="free"),
            _call("back_to_origin", arm)]


def descend_into(arm: str, obj: SceneObject, spot_xy: tuple[float, float], floor_z: float,
                 rim_z: float) -> list[SkillCall]:
    """Place an object held from above at ``spot_xy`` on the floor, its straight descent starting clear of the
    rim; where the arm cannot get above it, the descent starts lower (inside the opening), then the object is
    turned about its axis (a grasp that leans puts the hand off the object's axis: turned, the hand comes nearer
    the arm), then the spot moves a little along x and y."""
    pre = rim_z + RIM_CLEAR_M - floor_z
    target = [spot_xy[0], spot_xy[1], floor_z + RELEASE_GAP_M]
    others = [CallVariant(args={"pre_dis": p}) for p in (pre - 0.03, pre - 0.05) if p > 0.02]
    others += [CallVariant(target_pose=[*target, *yaw_quat(yaw)], args={"constrain": "align", "pre_dis": pre})
               for yaw in PLACE_YAWS_RAD]
    others += [CallVariant(target_pose=[spot_xy[0] + dx, spot_xy[1] + dy, target[2]], args={"pre_dis": p})
               for dx, dy in ((-0.035, 0.0), (0.035, 0.0), (0.0, 0.03), (0.0, -0.03))
               for p in (pre, max(0.03, pre - 0.05))]
    return [_call("place_actor", arm, obj.id, target, alternatives=others, functional_point_id=0, pre_dis=pre,
                  dis=0.0, constrain="free"),
            _call("back_to_origin", arm)]


DROP_TAKEN_M = 0.04  # a drop point with another object's centre this near (or within its half-width) is taken


def drop_point(target: SceneObject, obj: SceneObject, others: Iterable[SceneObject] = (),
               initial: Sequence[SceneObject] = ()) -> tuple[float, float, float] | None:
    """The target's drop point (tray halves, a bin's mouth) nearest the object as it stood from the target when
    both were first seen (``initial``), whatever lies there now; without a first look, the nearest one no other
    object of ``others`` (the scene, but the object and the target) stands on, else the nearest; None if its
    model names none. Each object goes to the half on its own side however a slip moved it or the tray since,
    and never swaps halves with another knocked onto its own (the other goes back to its half on its turn)."""
    drops = ft.drop_points(target)
    if not drops:
        return None
    was = {o.id: o.position_m for o in initial}
    if obj.id in was and target.id in was:
        side = (target.position_m[0] + was[obj.id][0] - was[target.id][0],
                target.position_m[1] + was[obj.id][1] - was[target.id][1])
        return min(drops.values(), key=lambda p: math.dist(p[:2], side))
    anchor = obj.position_m[:2]

    def taken(p: tuple[float, float, float]) -> bool:
        return any(math.dist(p[:2], o.position_m[:2]) < max(DROP_TAKEN_M, min(o.size_m[0], o.size_m[1]) / 2)
                   for o in others if o.id not in (obj.id, target.id))

    order = sorted(drops.values(), key=lambda p: math.dist(p[:2], anchor))
    return next((p for p in order if not taken(p)), order[0])


def handover_grasps(obj: SceneObject) -> tuple[list[int], list[int]]:
    """(the giver's grasps, the receiver's): the giver takes the object low, the receiver at least
    ``HANDOVER_GAP_M`` from there, farthest first. Without grasp frames: the skill's own choice for both."""
    gs = [g for g in ft.grasps(obj) if g.approach_m[2] < 0.3]
    if not gs:
        return [], []
    low = min(g.height for g in gs)
    giver = [g.cp for g in gs if g.height <= low + 0.01]
    taker = sorted((g for g in gs if g.height >= low + HANDOVER_GAP_M), key=lambda g: -(g.height - low))
    return giver, [g.cp for g in taker]


def held_askew(now: SceneObject, first: SceneObject | None) -> bool:
    """Whether a held object's up axis is more than ``ASKEW_DEG`` off the one it was first seen with (it turned in
    the hand: a grasp pushed by the other hand's fingers)."""
    if first is None:
        return False
    cos = float(np.dot(ft.up_axis(now), ft.up_axis(first)))
    return cos < math.cos(math.radians(ASKEW_DEG))


def set_down_calls(arm: str, obj: SceneObject, spot_xy: tuple[float, float], table_z: float) -> list[SkillCall]:
    """Set a held object down standing at ``spot_xy`` (turned in turn where the arm cannot reach), then go home."""
    poses = [[spot_xy[0], spot_xy[1], table_z, *yaw_quat(y)] for y in PLACE_YAWS_RAD]
    return [_call("place_actor", arm, obj.id, poses[0], alternatives=[CallVariant(target_pose=p) for p in poses[1:]],
                  functional_point_id=0, constrain="align"),
            _call("back_to_origin", arm)]


def handover_calls(giver: str, taker: str, obj: SceneObject, table_z: float, attempt: int,
                   holding: bool, lying: bool = False) -> list[SkillCall]:
    """A mid-air handover: the giver takes the object (unless it holds it; ``lying``: stands it up first), holds it
    up in the middle turned in turn until the receiver reaches a grasp far from the giver's, the giver lets go and
    goes home, the receiver lifts it a little."""
    g_cps, t_cps = handover_grasps(obj)
    # each attempt holds it up turned another way first (the turn decides which of the object's sides the
    # receiver can reach), mirrored for the giver's side; the other heights and spots are ways to reach it
    yaws = [(math.pi - y if giver == "right" else -y) for y in HANDOVER_YAWS_RAD]
    poses = [[x, y, table_z + h, *yaw_quat(yaw)] for yaw in rotate(yaws, attempt) for h in HANDOVER_BOTTOM_M
             for (x, y) in HANDOVER_XY_M]
    hold_up = _call("place_actor", giver, obj.id, poses[0],
                    alternatives=[CallVariant(target_pose=list(p)) for p in poses[1:]],
                    functional_point_id=0, pre_dis=0.0, dis=0.0, is_open=False, constrain="align")
    take = grasp_call(taker, obj, rotate(t_cps, attempt), TAKE_PRE_GRASP_M)
    first = _call("upright_actor", giver, obj.id) if lying else grasp_call(giver, obj, g_cps)
    calls = [] if holding else [first]
    return [*calls, hold_up, take, _call("open_gripper", giver), _call("back_to_origin", giver),
            _call("move_by_displacement", taker, z=0.05)]


def hang_calls(arm: str, obj: SceneObject, rack: SceneObject, holding: bool, attempt: int) -> list[SkillCall]:
    """Hang ``obj`` by its handle onto ``rack``'s hook: held by its rim (not the handle), the handle is brought
    out along the hook's rod and threaded on with a straight move along it; then let go, rise, go home.

    The hook passes through the handle's opening only with the handle across the rod: a handle within
    ``HANG_YAW_TOL_RAD`` of that is brought out as held (else turned there on the way), one farther off (a mug
    that fell back onto the table after a miss lands any way round) is turned about the object's axis on the way,
    to the nearer side of the rod first."""
    hk = ft.hook(rack)
    handle, base = ft.point(obj, "handle"), ft.point(obj, "fp0")
    if hk is None or handle is None or base is None:
        raise AgentError(f"cannot hang {obj.id} on {rack.id}: perception knows no hook on it or no handle on "
                         f"{obj.id} (colour and depth perception do not see those parts)")
    hook_xyz, along = hk
    start = hook_xyz + HOOK_START_M * along
    grasp = ft.grasp_ids(obj, "rim") or ft.grasp_ids(obj, top_down=True) or ft.grasp_ids(obj, "top")
    calls = [] if holding else [grasp_call(arm, obj, rotate(grasp, attempt))]
    step = hook_xyz - start
    targets = _hang_targets(obj, np.asarray(handle) - np.asarray(base), start, along)
    first, *more = targets
    return [*calls,
            _call("place_actor", arm, obj.id, first[0], alternatives=[
                CallVariant(target_pose=t, args={"constrain": c}) for t, c in more],
                functional_point_id=0, pre_dis=0.0, dis=0.0, is_open=False, constrain=first[1]),
            _call("move_by_displacement", arm, x=float(step[0]), y=float(step[1]), z=float(step[2])),
            _call("open_gripper", arm),
            _call("move_by_displacement", arm, z=HANG_RISE_M),
            _call("back_to_origin", arm)]


def _hang_targets(obj: SceneObject, offset: np.ndarray, start: np.ndarray, along: np.ndarray,
                  ) -> list[tuple[list[float], str]]:
    """Place targets (object bottom, and "free" or "align") that bring the handle to ``start``: as held where
    the handle is across the rod, then turned across it on either side (the nearer first)."""
    now = math.atan2(float(offset[1]), float(offset[0]))
    rod = math.atan2(float(along[1]), float(along[0]))
    turns = sorted((math.remainder(rod + side * math.pi / 2 - now, 2 * math.pi) for side in (1.0, -1.0)), key=abs)
    yaw0 = ft.yaw_rad(obj)
    out: list[tuple[list[float], str]] = []
    if abs(turns[0]) <= HANG_YAW_TOL_RAD:
        out.append(([float(v) for v in start - offset], "free"))
    for turn in turns:
        c, s_ = math.cos(turn), math.sin(turn)
        turned = np.array([c * offset[0] - s_ * offset[1], s_ * offset[0] + c * offset[1], offset[2]])
        out.append(([*(float(v) for v in start - turned), *yaw_quat(yaw0 + turn)], "align"))
    return out


def handle_yaw_goal(subtask: Subtask, rack: SceneObject | None) -> float:
    """Where a turned object's handle is to point (world yaw): across a later hook's rod, away from the robot;
    else as the instruction says; else away from the robot."""
    if subtask.turn_to == "for_hook" and rack is not None and (hk := ft.hook(rack)) is not None:
        ax, ay = float(hk[1][0]), float(hk[1][1])
        a, b = math.atan2(ax, -ay), math.atan2(-ax, ay)  # the two horizontal directions across the rod
        return a if math.sin(a) >= math.sin(b) else b
    return {"away": math.pi / 2, "toward_robot": -math.pi / 2, "left": math.pi, "right": 0.0}.get(
        subtask.turn_to or "away", math.pi / 2)


def turn_calls(arm: str, obj: SceneObject, target_xy: tuple[float, float], table_z: float, handle_goal: float,
               holding: bool, attempt: int) -> list[SkillCall]:
    """Set ``obj`` down at ``target_xy`` (else farther from the robot, where the arm reaches) turned so its handle
    points along ``handle_goal`` (within 30 degrees), taken by its rim, else its handle, else any grasp."""
    now = ft.handle_yaw_rad(obj)
    if now is None:
        raise AgentError(f"cannot turn {obj.id}: perception knows no handle on it to turn")
    yaw0 = ft.yaw_rad(obj)
    poses = [[target_xy[0], target_xy[1] + dy, table_z, *yaw_quat(yaw0 + handle_goal + d - now)]
             for dy in CENTRE_Y_STEPS_M for d in TURN_OFFSETS_RAD]
    poses = rotate(poses, attempt)
    grasp = (ft.grasp_ids(obj, "rim") or ft.grasp_ids(obj, top_down=True)) + ft.grasp_ids(obj, "handle")
    calls = [] if holding else [grasp_call(arm, obj, rotate(grasp, attempt))]
    return [*calls,
            _call("place_actor", arm, obj.id, poses[0], alternatives=[CallVariant(target_pose=p) for p in poses[1:]],
                  functional_point_id=0, pre_dis=TURN_PRE_DIS_M, constrain="align"),
            _call("back_to_origin", arm)]


def lift_calls(arm: str, obj: SceneObject, holding: bool, table_z: float, height_m: float | None,
               attempt: int) -> list[SkillCall]:
    """Take ``obj`` (by a handle when it has one, the one on the arm's side first) and raise it; it stays held."""
    handles = sorted(ft.grasps(obj), key=lambda g: g.position_m[0] * (1.0 if arm == "left" else -1.0))
    grasp = [g.cp for g in handles if g.part.startswith("handle")]
    calls = [] if holding else [grasp_call(arm, obj, rotate(grasp, attempt))]
    if height_m is not None:
        rise = max(0.0, height_m - table_z + 0.02)
        return [*calls, _call("move_by_displacement", arm, z=rise,
                              alternatives=[CallVariant(args={"z": rise + d}) for d in (0.02, 0.04)])]
    return [*calls, _call("move_by_displacement", arm, z=LIFT_STEPS_M[0],
                          alternatives=[CallVariant(args={"z": d}) for d in LIFT_STEPS_M[1:]])]


def tops_of(obj: SceneObject, scene: SceneMemory, localized: dict[str, SceneObject]) -> list[SceneObject]:
    """Objects resting on ``obj`` (their bottom at its top, their centre over it)."""
    out = []
    for o in others(obj.id, scene, localized):
        over = math.dist(o.position_m[:2], obj.position_m[:2]) < max(obj.size_m[0], obj.size_m[1]) / 2
        on_top = abs((o.position_m[2] - o.size_m[2] / 2) - ft.top_z(obj)) < 0.02
        if over and on_top:
            out.append(o)
    return out


def aside_spot(obj: SceneObject, scene: SceneMemory, localized: dict[str, SceneObject]) -> tuple[float, float]:
    """A free spot beside the workspace on the object's own side, towards the back, to put it out of the way."""
    side = 1.0 if obj.position_m[0] >= 0 else -1.0
    return free_spot((side * 0.25, min(0.08, obj.position_m[1] + 0.1)), obj, others(obj.id, scene, localized))
