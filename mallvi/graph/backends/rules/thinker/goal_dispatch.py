"""Which of the goal planners (``goal_plans.py``) a subtask needs, with its arms chosen and reach checked.

None means the subtask is a plain pick, place or arrangement that the Thinker's usual planning handles.
"""

from __future__ import annotations

import math

from mallvi.contracts.geometry import ArmSide
from mallvi.contracts.skills import FailureKind
from mallvi.graph.agent_errors import AgentError, OutOfReachError
from mallvi.graph.backends.rules.thinker import features as ft
from mallvi.graph.backends.rules.thinker import goal_plans as gp
from mallvi.graph.backends.rules.thinker.ee_plans import holder_of
from mallvi.graph.ports import AgentContext
from mallvi.graph.posture import first_seen, lies_on_side, tipped_with_handle
from mallvi.graph.refs import ResolutionError, candidates_of, resolve
from mallvi.graph.schemas import ActionPlan, FailedStep, ObjectRef, SceneMemory, SceneObject, SkillCall, Subtask

RELAY_XY_M = ((0.0, -0.13), (0.0, -0.10), (-0.04, -0.14), (0.04, -0.14))  # near the robot: both arms reach down
RELAY_BACK_XY_M = ((0.0, -0.05), (0.0, 0.0))  # farther in, tried where none of those can be reached
RELAY_TAKER_SHIFT_M = 0.04
"""A relay starts at the spot this far towards the taker's side (then the others): taken from (0, -0.13), a bottle
stood up by the right arm was held by the left at a 25-degree lean on 4 of 6 development seeds (1430000-1430005, no
faults), its hand 8-9 cm off the bottle's axis; from (-0.04, -0.14) on 6 of 6 it was held straight."""
STAND_LOW_PRE_M = 0.03
"""A stood-up object is lowered onto its spot from this high where it cannot be from 8 cm: a bottle of 24 cm held by
its top end put the hand 1.13 m up at the work centre, beyond either arm. From 3 cm at (0, -0.13), the first relay
spot, both arms set six of six down; at (0, -0.05) one of six (development seeds 1400000-1400005)."""
HELD_UP_M = 0.02  # a container held with its bottom this far above the table is held up, not resting in a hand


def _find(localized: dict[str, SceneObject], ref: ObjectRef | None, exclude: str) -> SceneObject | None:
    if ref is None:
        return None
    try:
        return localized[resolve(ref, candidates_of(list(localized.values())), exclude=[exclude],
                                 allow_color_only=True).name]
    except (ResolutionError, KeyError):
        return None


def _side(obj: SceneObject) -> str:
    return "left" if obj.position_m[0] < 0 else "right"


def _other(arm: str) -> str:
    return "right" if arm == "left" else "left"


def _reaches(ctx: AgentContext, arm: str, xy: tuple[float, float], height_m: float = 0.0) -> bool:
    side: ArmSide = "left" if arm == "left" else "right"
    return ctx.reach[side].reaches(xy[0], xy[1], height_m) or ctx.reach[side].reaches(xy[0], xy[1], height_m, True)


def goal_plan(subtask: Subtask, obj: SceneObject, localized: dict[str, SceneObject], scene: SceneMemory,
              ctx: AgentContext, attempt: int, failed: FailedStep | None) -> ActionPlan | None:
    """The plan for a subtask that needs a goal planner, or None."""
    # the arm holding this object, not one holding something else; each other object where it is seen now
    held_by = holder_of(obj, ctx, [*localized.values(), *(o for o in scene.objects if o.id not in localized)])
    target = _find(localized, subtask.target, obj.id)
    hint = subtask.arm_hint if subtask.arm_hint in ("left", "right") else None
    table_z = ctx.table_top_z
    if subtask.action == "handover":
        giver = hint or (held_by if held_by is not None else _side(obj))
        first = first_seen(obj, scene.initial)
        if held_by == giver and attempt >= gp.SET_DOWN_FROM_ATTEMPT and first is not None \
                and gp.held_askew(obj, first):
            # turned in the giver's hand, and offered that way without success: set it down standing, and the
            # next attempt takes it afresh from where it then is (standing, or stood up first)
            x, y = first.position_m[0], first.position_m[1]
            return ActionPlan(calls=gp.set_down_calls(giver, obj, (x, y), table_z),
                              strategy=f"set {obj.id} down to take it afresh #{attempt}",
                              rationale=f"{obj.id} is held askew: the {giver} arm sets it down standing at ({x:.2f}, "
                                        f"{y:.2f}), where it was first seen, to take it again with a fresh grasp")
        lying = lies_on_side(obj, first)
        calls = gp.handover_calls(giver, _other(giver), obj, table_z, attempt, holding=held_by == giver, lying=lying)
        return ActionPlan(calls=calls, strategy=f"mid-air handover {giver}->{_other(giver)} #{attempt}",
                          rationale=f"the {giver} arm holds {obj.id} up in the middle; the {_other(giver)} arm takes "
                                    "it there, away from the giver's grasp")
    if subtask.action in ("hang", "turn") and held_by is None and tipped_with_handle(obj):
        return _stand_up(obj, localized, scene, ctx, failed, attempt)
    if subtask.action == "hang":
        if target is None:
            raise AgentError(f"no localised hook for {subtask.text!r}")
        arm = hint or _side(target)
        calls = gp.hang_calls(arm, obj, target, holding=held_by == arm, attempt=attempt)
        return ActionPlan(calls=calls, strategy=f"hang {arm} #{attempt}",
                          rationale=f"the {arm} arm threads {obj.id}'s handle onto {target.id}'s hook along its rod")
    if subtask.action == "turn":
        arm = hint or _side(obj)
        where = (gp.centre_target(obj, scene, localized, table_z)[:2] if subtask.relation == "center"
                 else obj.position_m[:2])
        goal = gp.handle_yaw_goal(subtask, target)
        calls = gp.turn_calls(arm, obj, (where[0], where[1]), table_z, goal, holding=held_by == arm, attempt=attempt)
        return ActionPlan(calls=calls, strategy=f"turn {arm} #{attempt}",
                          rationale=f"set {obj.id} down at ({where[0]:.2f}, {where[1]:.2f}) with its handle at "
                                    f"{math.degrees(goal):.0f} deg")
    if subtask.action == "lift":
        if subtask.arm_hint == "both":
            raise AgentError("a lift with both arms at once needs end-effector actions (the fine tier's action "
                             "space); the primitives move one arm at a time")
        arm = hint or (held_by if held_by is not None else _side(obj))
        calls = gp.lift_calls(arm, obj, held_by == arm, table_z, subtask.height_m, attempt)
        return ActionPlan(calls=calls, strategy=f"lift {arm} #{attempt}",
                          rationale=f"the {arm} arm takes {obj.id} and raises it; it stays held")
    if subtask.relation == "in" and target is not None and (ft.is_container(target) or _was_container(target, scene)):
        down = _container_down(target, localized, scene, ctx, attempt)
        if down is not None:
            return down
        if held_by is None and lies_on_side(obj, first_seen(obj, scene.initial)):
            # a tall object a fault laid down: stood up by the arm on its side, after that arm failed to by the
            # other, and set down standing; taken as it lies after the other failed too
            here = (obj.position_m[0], obj.position_m[1])
            arms = [a for a in (_side(obj), _other(_side(obj))) if _reaches(ctx, a, here)]
            if failed is not None and failed.skill == "upright_actor" and failed.arm in arms:
                arms = arms[arms.index(failed.arm) + 1:]
            if arms:
                return _stand_up(obj, localized, scene, ctx, None, attempt, arm=arms[0], near_first=True)
        return _into(subtask, obj, target, localized, scene, ctx, hint, held_by, attempt)
    if subtask.relation == "center" and subtask.action in ("place", "move", "stack"):
        return _to_centre(subtask, obj, localized, scene, ctx, hint, held_by, attempt)
    return None


def _stand_up(obj: SceneObject, localized: dict[str, SceneObject], scene: SceneMemory, ctx: AgentContext,
              failed: FailedStep | None, attempt: int, arm: str | None = None, near_first: bool = False) -> ActionPlan:
    """Stand a lying ``obj`` up (``upright_actor``) with ``arm``, by default the arm on its side (the other after
    that arm found no way), and set it down standing at the work centre, else back where it lay; else, lowered
    from ``STAND_LOW_PRE_M``, at the relay spots near the robot or those spots. ``near_first``: the relay spots
    first (a tall object held by its top end: only there do the arms reach down with it). The subtask is planned
    again from there."""
    if arm is None:
        arm = _side(obj)
        if failed is not None and failed.skill == "upright_actor" and failed.arm == arm:
            arm = _other(arm)
    x, y, z = gp.centre_target(obj, scene, localized, ctx.table_top_z)
    high = [[x, y + dy, z] for dy in gp.CENTRE_Y_STEPS_M] + [[obj.position_m[0], obj.position_m[1], z]]
    around = gp.others(obj.id, scene, localized)
    near = [[sx, sy, z] for sx, sy in dict.fromkeys(gp.free_spot(c, obj, around) for c in RELAY_XY_M)]
    spots = ([(p, STAND_LOW_PRE_M) for p in near] + [(p, 0.08) for p in high] if near_first
             else [(p, 0.08) for p in high] + [(p, STAND_LOW_PRE_M) for p in [*near, *high]])
    (first, first_pre), rest = spots[0], spots[1:]
    calls = [gp._call("upright_actor", arm, obj.id),
             gp._call("place_actor", arm, obj.id, first,
                      alternatives=[gp.CallVariant(target_pose=p, args={"pre_dis": pre}) for p, pre in rest],
                      functional_point_id=0, pre_dis=first_pre, dis=0.005, constrain="free"),
             gp._call("back_to_origin", arm)]
    return ActionPlan(calls=calls, strategy=f"stand up {arm} #{attempt}",
                      rationale=f"{obj.id} lies on its side: the {arm} arm stands it up and sets it down at "
                                f"({first[0]:.2f}, {first[1]:.2f}); the subtask is planned again from there")


def _to_centre(subtask: Subtask, obj: SceneObject, localized: dict[str, SceneObject], scene: SceneMemory,
               ctx: AgentContext, hint: str | None, held_by: str | None, attempt: int) -> ActionPlan:
    """To a free spot at the work centre (else farther from the robot), by the arm holding it or on its side;
    held on when the subtask says so (a container that is to receive something)."""
    x, y, z = gp.centre_target(obj, scene, localized, ctx.table_top_z)
    arm = hint or held_by or _side(obj)
    spots = gp.rotate([[x, y + dy, z] for dy in gp.CENTRE_Y_STEPS_M], attempt)
    calls: list[SkillCall] = [] if held_by == arm else [gp.grasp_call(arm, obj, gp.rotate(_grasp_for(obj), attempt))]
    calls.append(gp._call("place_actor", arm, obj.id, spots[0],
                          alternatives=[gp.CallVariant(target_pose=p) for p in spots[1:]], functional_point_id=0,
                          pre_dis=0.08, dis=0.005, constrain="free", is_open=not subtask.hold))
    if not subtask.hold:
        calls.append(gp._call("back_to_origin", arm))
    return ActionPlan(calls=calls, strategy=f"to the centre {arm} #{attempt}",
                      rationale=f"the {arm} arm puts {obj.id} at ({spots[0][0]:.2f}, {spots[0][1]:.2f}), the centre "
                                "of the workspace")


def _container_down(box: SceneObject, localized: dict[str, SceneObject], scene: SceneMemory, ctx: AgentContext,
                    attempt: int) -> ActionPlan | None:
    """A container held up in a hand (lifted by a later subtask, before this earlier one was found undone) is set
    down first, on a free spot near where it was first seen; the next attempt puts the object in. None when no
    hand holds it up."""
    holder = holder_of(box, ctx, [*localized.values(), *(o for o in scene.objects if o.id not in localized)])
    if holder is None or ft.bottom_z(box) - ctx.table_top_z < HELD_UP_M:
        return None
    first = first_seen(box, scene.initial) or box
    x, y = gp.free_spot((first.position_m[0], first.position_m[1]), box, gp.others(box.id, scene, localized))
    z = ctx.table_top_z
    calls = [gp._call("place_actor", holder, box.id, [x, y, z], functional_point_id=0, pre_dis=0.08, dis=0.005,
                      constrain="free"),
             gp._call("back_to_origin", holder)]
    return ActionPlan(calls=calls, strategy=f"set {box.id} down first #{attempt}",
                      rationale=f"the {holder} arm holds {box.id} up: it sets it down at ({x:.2f}, {y:.2f}), near "
                                "where it was first seen, before anything goes in")


def _into(subtask: Subtask, obj: SceneObject, box: SceneObject, localized: dict[str, SceneObject],
          scene: SceneMemory, ctx: AgentContext, hint: str | None, held_by: str | None, attempt: int) -> ActionPlan:
    """Into a container. The ways, in turn from ``attempt``: each arm that reaches both the object (or holds it)
    and the container's spot, then a relay through a free spot in the middle of the table to an arm that reaches
    the container (the giver tries the other relay spots, then two farther in, where it cannot bring the object
    above the first)."""
    grasp = gp.rotate(_grasp_for(obj), attempt // 2)
    arms = [hint] if hint else ([held_by] if held_by else []) + [a for a in (_side(obj), _other(_side(obj)))
                                                                if a != held_by]
    here = (obj.position_m[0], obj.position_m[1])
    rim_h = ft.top_z(box) - ctx.table_top_z

    def spot(arm: str) -> tuple[float, float]:
        return gp.container_spot(box, obj, subtask.slot, len(subtask.group), arm)

    direct = [a for a in arms if (held_by == a or _reaches(ctx, a, here)) and _reaches(ctx, a, spot(a), rim_h)]
    # an arm reaching across to the other side takes the object at a slant: a relay from its own side first
    ways: list[tuple[str, str]] = [("direct", a) for a in direct if a == held_by or a == _side(obj)]
    takers = [a for a in ("left", "right") if _reaches(ctx, a, spot(a), rim_h)]
    if not hint:
        # the other arm gives: from the object's side, or where only it reaches the object (pushed past the middle)
        ways += [("relay", t) for t in takers if held_by in (None, _other(t))
                 and (t != _side(obj) or (t not in direct and (held_by is not None or _reaches(ctx, _other(t), here))))]
    ways += [("direct", a) for a in direct if ("direct", a) not in ways]
    if not ways:
        if takers and held_by is None and not any(_reaches(ctx, a, here) for a in ("left", "right")):
            raise OutOfReachError(f"neither arm reaches {obj.id} at ({here[0]:.2f}, {here[1]:.2f})")
        raise AgentError(f"neither arm reaches into {box.id} at ({box.position_m[0]:.2f}, {box.position_m[1]:.2f})")
    how, arm = ways[attempt % len(ways)]
    if how == "direct":
        into = gp.into_container(arm, obj, box, subtask, holding=held_by == arm, grasp=grasp)
        s = spot(arm)
        return ActionPlan(calls=into, strategy=f"into {box.id} {arm} #{attempt}",
                          rationale=f"the {arm} arm lowers {obj.id} into {box.id} at ({s[0]:.3f}, {s[1]:.3f})")
    taker, giver = arm, _other(arm)
    around = gp.others(obj.id, scene, localized)
    centres = [*gp.rotate(_relay_centres(taker), attempt // len(ways)), *RELAY_BACK_XY_M]
    spots = list(dict.fromkeys(gp.free_spot(c, obj, around) for c in centres))
    relay = spots[0]
    z = ctx.table_top_z + 0.005

    def relay_calls(cps: list[int]) -> list[SkillCall]:
        # one grasp per sequence (the others are fallbacks): the slide off the object after letting go runs
        # across that grasp's fingers
        out: list[SkillCall] = []
        if held_by != giver:
            out.append(gp.grasp_call(giver, obj, cps[:1]))
        # the other spots are tried where the giver cannot bring the object above this one (a wide bowl held at
        # its rim near the robot's front)
        out += [gp._call("place_actor", giver, obj.id, [relay[0], relay[1], z],
                         alternatives=[gp.CallVariant(target_pose=[x, y, z]) for x, y in spots[1:]],
                         functional_point_id=0, pre_dis=0.03, dis=0.0),
                *(gp.slide_off(giver, obj, cps[0]) if cps else []),
                gp._call("back_to_origin", giver),
                *gp.into_container(taker, obj, box, subtask, holding=False, grasp=grasp)]
        return out

    sequences = [relay_calls(gp.rotate(grasp, k)) for k in range(max(1, len(grasp) if held_by != giver else 1))]
    return ActionPlan(calls=sequences[0], fallbacks=sequences[1:],
                      strategy=f"relay into {box.id} {giver}->{taker} #{attempt}",
                      rationale=f"the {giver} arm stands {obj.id} at ({relay[0]:.2f}, {relay[1]:.2f}); the {taker} "
                                f"arm lowers it into {box.id}")


def _relay_centres(taker: str) -> list[tuple[float, float]]:
    """``RELAY_XY_M`` with the spot ``RELAY_TAKER_SHIFT_M`` towards ``taker``'s side first."""
    toward = -RELAY_TAKER_SHIFT_M if taker == "left" else RELAY_TAKER_SHIFT_M
    first = next(c for c in RELAY_XY_M if math.isclose(c[0], toward))
    return [first, *(c for c in RELAY_XY_M if c != first)]


def _was_container(obj: SceneObject, scene: SceneMemory) -> bool:
    """Whether the scene memory knows ``obj`` as a container (this look at it may name only its shape: a bowl
    seen as a round thing)."""
    seen = scene.get(obj.id)
    return seen is not None and ft.is_container(seen)


def _grasp_for(obj: SceneObject) -> list[int]:
    """A tall object is held by its neck or top (it is lowered in upright), anything else the skill's choice."""
    tall = obj.size_m[2] >= 1.5 * max(obj.size_m[0], obj.size_m[1])
    if tall:
        return ft.grasp_ids(obj, "neck") or ft.grasp_ids(obj, top_down=True)
    return []


__all__ = ["FailureKind", "goal_plan"]
