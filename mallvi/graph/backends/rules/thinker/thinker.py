"""Rules Thinker: geometric skill parameters for a subtask.

Arm: the instruction's arm if it names one, else the object's side (x < 0 left, x >= 0 right); after a failure
of a reach kind (unreachable, no plan, wrong arm), the other arm on every other attempt. Retries route on the
failed call's ``FailureKind``, never on the words of its message. An arm the instruction names for a placement
places the object; when a fault left the object out of that arm's reach, the other arm first brings it to a relay
spot in the middle. Reach comes from the Station (``AgentContext.reach``, one envelope per arm) and is judged at
the grasp's height (a standing tall object is grasped near its top). A tall object is picked up with
``upright_actor``, which stands it up first when it lies on its side.

Place targets are the functional point 0 (bottom centre) of the moved object: on B -> B's top centre; in B -> B's
floor; beside B -> ``SIDE_GAP_M`` off B's side on the table; an arrangement slot -> a free row of evenly spaced
slots; a remembered location -> where the Descriptor first saw the object.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mallvi.contracts.geometry import ArmSide
from mallvi.contracts.skills import FailureKind
from mallvi.graph.agent_errors import AgentError, NoStrategyLeftError, OutOfReachError
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.rules.thinker.ee_plans import ee_plan, holder_of
from mallvi.graph.backends.rules.thinker.features import floor_z, is_container
from mallvi.graph.backends.rules.thinker.goal_dispatch import goal_plan
from mallvi.graph.backends.rules.thinker.goal_plans import (
    aside_spot,
    centre_target,
    cross_slot,
    drop_point,
    tops_of,
    yaw_quat,
)
from mallvi.graph.backends.rules.thinker.members import member_out_of_place
from mallvi.graph.backends.rules.thinker.pull import pulls
from mallvi.graph.backends.rules.thinker.regrasp import regrasps
from mallvi.graph.backends.rules.thinker.strategies import low_approach, nudges, steered
from mallvi.graph.failure_memory import FailedAttempt, repeats, summary
from mallvi.graph.goals import Box, wide_target
from mallvi.graph.ports import AgentContext
from mallvi.graph.posture import first_seen, is_tall, lies_on_side, tall_at_first
from mallvi.graph.refs import ResolutionError, candidates_of, resolve
from mallvi.graph.schemas import (
    ActionPlan,
    CallVariant,
    FailedStep,
    ObjectRef,
    SceneMemory,
    SceneObject,
    SkillCall,
    Subtask,
)

if TYPE_CHECKING:
    from mallvi.graph.ports import AgentContext

GOAL_VARIANTS = 8  # a goal planner's variants tried before a subtask has no strategy left
SIDE_GAP_M = 0.10
SLOT_PITCH_M = 0.09
ROW_Y_CHOICES_M = (-0.10, -0.03, -0.16, 0.0)
RELAY_Y_CHOICES_M = (-0.08, -0.15, -0.02)
RELAY_TOL_M = 0.05  # an object this close to the relay spot is already there
CLEARANCE_M = 0.07
LIFT_M = 0.05
DOWN_WXYZ = [1.0, 0.0, 0.0, 0.0]
GRASP_BELOW_TOP_M = 0.025  # a standing object's top-down grasp centre lies this far below its top
RAISED_GRASP_M = 0.01
"""Where no grasp of an object is reachable, the fingers stop this far short of the grasp point instead
(``grasp_dis``): on a tray their tips reached its floor, and no grasp of a 3.8 cm burger lying on it was found
anywhere; stopping 1 cm short, both arms took it wherever they reach the tray (simulator)."""


def _reaches(ctx: AgentContext, arm: str, x: float, y: float, height_m: float = 0.0,
             leaning: bool = False) -> bool:
    """Whether ``arm`` reaches a point ``height_m`` above the table, by the Station's reach envelope of that arm
    (``leaning``: with a leaned top-down grasp of an object on the table)."""
    side: ArmSide = "left" if arm == "left" else "right"
    return ctx.reach[side].reaches(x, y, height_m, leaning)


def grasp_height_m(obj: SceneObject, table_z: float) -> float:
    """How high above the table a standing tall object is grasped (near its top); 0 for any other object (cubes,
    and tall objects lying down, are grasped near the table)."""
    if not is_tall(obj):
        return 0.0
    return max(0.0, obj.position_m[2] + obj.size_m[2] / 2 - GRASP_BELOW_TOP_M - table_z)


def relay_spot(obj_id: str, scene: SceneMemory, localized: dict[str, SceneObject],
               target_xyz: tuple[float, float, float]) -> tuple[float, float]:
    """A free table spot near x = 0 that both arms reach, away from every other object and the target."""
    others = [o.position_m[:2] for o in list(scene.objects) + list(localized.values()) if o.id != obj_id]
    others.append(target_xyz[:2])
    for y in RELAY_Y_CHOICES_M:
        if all(((px - 0.0) ** 2 + (py - y) ** 2) ** 0.5 > CLEARANCE_M for px, py in others):
            return (0.0, y)
    return (0.0, RELAY_Y_CHOICES_M[0])


def _grasp(arm: str, obj_id: str, grasp_args: dict[str, float] | None = None, upright: bool = False) -> SkillCall:
    """The grasp of ``obj_id``: ``upright_actor`` for a tall object (it stands one that fell over up again and
    simply grasps one that stands), else ``grasp_actor``, stopping ``RAISED_GRASP_M`` short where no grasp is
    reachable."""
    if upright:
        args = {k: v for k, v in (grasp_args or {}).items() if k == "pre_grasp_dis"}
        return SkillCall(skill="upright_actor", arm=arm, object=obj_id, args=dict(args))  # type: ignore[arg-type]
    return SkillCall(skill="grasp_actor", arm=arm, object=obj_id, args=dict(grasp_args or {}),  # type: ignore[arg-type]
                     alternatives=[CallVariant(args={"grasp_dis": RAISED_GRASP_M})])


def _take(arm: str, obj_id: str, upright: bool) -> list[SkillCall]:
    """Grasp and lift ``LIFT_M`` more; ``upright_actor`` ends lifted already (as high as the arm reaches)."""
    lift = SkillCall(skill="move_by_displacement", arm=arm, args={"z": LIFT_M})  # type: ignore[arg-type]
    return [_grasp(arm, obj_id, upright=upright)] + ([] if upright else [lift])


#: shorter straight descents tried where a place's descent from 8 cm cannot be planned
PLACE_PRE_DIS_M = (0.05, 0.03)
#: ... then the object set down turned a quarter either way (another arm posture over the same spot)
PLACE_TURNS_RAD = (math.pi / 2, -math.pi / 2)


def _place_variants(target_xyz: tuple[float, float, float]) -> list[CallVariant]:
    """What a place tries when its motion cannot be planned."""
    out = [CallVariant(args={"pre_dis": d}) for d in PLACE_PRE_DIS_M]
    out += [CallVariant(target_pose=[*target_xyz, *yaw_quat(a)], args={"constrain": "align"}) for a in PLACE_TURNS_RAD]
    return out


def _grasp_place(arm: str, obj_id: str, target_xyz: tuple[float, float, float],
                 grasp_args: dict[str, float] | None = None, upright: bool = False) -> list[SkillCall]:
    return [
        _grasp(arm, obj_id, grasp_args, upright),
        SkillCall(skill="place_actor", arm=arm, object=obj_id, target_pose=[*target_xyz, *DOWN_WXYZ],  # type: ignore[arg-type]
                  args={"functional_point_id": 0, "pre_dis": 0.08, "dis": 0.005, "constrain": "free"},
                  alternatives=_place_variants(target_xyz)),
        SkillCall(skill="back_to_origin", arm=arm),  # type: ignore[arg-type]
    ]


GRASP_SKILLS = ("grasp_actor", "upright_actor")
REACH_KINDS = (FailureKind.UNREACHABLE, FailureKind.NO_PLAN, FailureKind.WRONG_ARM)
"""Failure kinds that say the arm could not get there: the next attempt may try the other arm."""


def _retry_grasp(attempt: int, failed: FailedStep | None, grasp_ids: Sequence[int] = ()) -> dict[str, float] | None:
    """After a failed approach or grasp: a shorter straight approach, then also another grasp point (one of the
    object's ``grasp_ids`` where perception gives them, else one of the first four).

    A gripper that closed on nothing says nothing against the grasp itself (the object moved or was missed):
    the same grasp is tried again at the object's re-localised position. So does an object that moved in the
    hand after a good grasp (``EXECUTION``).
    """
    if attempt < 1 or failed is None:
        return None
    in_grasp = failed.skill in GRASP_SKILLS and failed.kind not in (FailureKind.GRASP_EMPTY, FailureKind.EXECUTION)
    if not (in_grasp or failed.kind == FailureKind.NOT_HOLDING):
        return None
    args: dict[str, float] = {"pre_grasp_dis": 0.1 - 0.02 * min(attempt, 3)}
    if attempt >= 2 and failed.kind != FailureKind.UNREACHABLE:  # no reachable grasp: every point was tried
        args["contact_point_id"] = grasp_ids[attempt % len(grasp_ids)] if grasp_ids else attempt % 4
    return args


def _unreachable_arm(failed: FailedStep | None) -> str | None:
    """The arm a failed attempt found no reachable grasp for."""
    if failed is None or failed.kind != FailureKind.UNREACHABLE or failed.skill not in GRASP_SKILLS:
        return None
    return failed.arm if failed.arm in ("left", "right") else None


def side_of(obj: SceneObject) -> str:
    return "left" if obj.position_m[0] < 0 else "right"


def other(arm: str) -> str:
    return "right" if arm == "left" else "left"


def slot_targets(group_ids: list[str], scene: SceneMemory, n: int | None = None) -> list[tuple[float, float]]:
    """``n`` (default: one per id) evenly spaced slots, centred at x = 0, on the first row free of objects outside
    the arrangement.

    The row is chosen on the first scan (``scene.initial`` when there is one), so re-scans after a dropped or
    misplaced object do not move the slots of the objects already arranged.
    """
    n = len(group_ids) if n is None else n
    xs = [(i - (n - 1) / 2) * SLOT_PITCH_M for i in range(n)]
    seen = scene.initial or scene.objects
    others = [o for o in seen if o.id not in group_ids]
    members = [o for o in seen if o.id in group_ids]
    for y in ROW_Y_CHOICES_M:
        if all(abs(o.position_m[1] - y) > CLEARANCE_M or all(abs(o.position_m[0] - x) > CLEARANCE_M for x in xs)
               for o in others + members):
            return [(x, y) for x in xs]
    # no completely free row: the one with the fewest blockers (members will be moved out of the way in order)
    return [(x, ROW_Y_CHOICES_M[0]) for x in xs]


def _pick_arm(subtask: Subtask, obj: SceneObject, attempt: int, failed: FailedStep | None) -> str:
    if subtask.arm_hint in ("left", "right"):
        return subtask.arm_hint
    arm = side_of(obj)
    reach_problem = failed is not None and failed.kind in REACH_KINDS
    return other(arm) if reach_problem and attempt % 2 == 1 else arm


class RulesThinker:
    def think(
        self, subtask: Subtask, localized: dict[str, SceneObject], scene: SceneMemory, attempt: int,
        feedback: str | None, ctx: AgentContext, log: CallLog, failed: FailedStep | None = None,
        failures: Sequence[FailedAttempt] = (),
    ) -> ActionPlan:
        """The usual plan; when it would repeat a failed attempt unchanged, the first alternative that does not
        (``alternatives``); when none is left, ``NoStrategyLeftError``. A goal planner's subtask (``goal_plan``)
        takes its own variants in turn instead. A group's subtask whose object is in place already moves a member
        that is not (``members.py``)."""
        obj = _find(localized, subtask.obj)
        target = _find(localized, subtask.target, exclude=obj.id) if obj is not None and subtask.target else None
        if obj is not None and (member := member_out_of_place(
                subtask, obj, target, localized, ctx.table_top_z,
                held=lambda o: holder_of(o, ctx, list(localized.values())) is not None)) is not None:
            ref = subtask.obj.model_copy(update={"instance": member.id, "phrase": f"the {member.label} ({member.id})"})
            plan = self._think(subtask.model_copy(update={"obj": ref}), localized, scene, attempt, feedback, ctx,
                               failed, failures)
            where = target.id if target is not None else "its target"
            return plan.model_copy(update={"rationale": f"{obj.id} is {subtask.relation} {where} already, "
                                                        f"{member.id} is not: {plan.rationale}"})
        return self._think(subtask, localized, scene, attempt, feedback, ctx, failed, failures)

    def _think(
        self, subtask: Subtask, localized: dict[str, SceneObject], scene: SceneMemory, attempt: int,
        feedback: str | None, ctx: AgentContext, failed: FailedStep | None = None,
        failures: Sequence[FailedAttempt] = (),
    ) -> ActionPlan:
        if getattr(ctx, "action_space", "primitives") == "ee":
            return self._ee_variants(subtask, localized, scene, attempt, ctx, failures)
        goal = self._goal_variants(subtask, localized, scene, attempt, ctx, failed, failures)
        if goal is not None:
            return goal
        try:
            plan: ActionPlan | None = self._usual(subtask, localized, scene, attempt, feedback, ctx, failed)
        except AgentError:
            if not failures:
                raise
            plan = None
        obj = _find(localized, subtask.obj)
        if plan is not None and obj is not None:
            plan = clear_first(plan, subtask, obj, _find(localized, subtask.target, exclude=obj.id)
                               if subtask.target else None, localized, scene, ctx.table_top_z)
        if plan is not None and (not failures or repeats(plan.calls, localized, failures) is None):
            back = steered(plan, obj, failures, localized, scene, ctx.table_top_z, ctx.reach)
            return plan if repeats(back.calls, localized, failures) is not None else back
        if obj is None:
            raise AgentError(f"{subtask.obj.phrase!r} was not localised")
        for alt in self.alternatives(subtask, obj, localized, scene, ctx):
            if repeats(alt.calls, localized, failures) is None:
                return alt
        x, y = obj.position_m[0], obj.position_m[1]
        raise NoStrategyLeftError(f"no different strategy remains for {obj.id} at ({x:.2f}, {y:.2f}); "
                             f"failed: {summary(failures)}")

    def _goal_variants(self, subtask: Subtask, localized: dict[str, SceneObject], scene: SceneMemory, attempt: int,
                       ctx: AgentContext, failed: FailedStep | None,
                       failures: Sequence[FailedAttempt]) -> ActionPlan | None:
        """For a subtask a goal planner handles: its plan at ``attempt``, else the next variants in turn that do
        not repeat a failed attempt; ``NoStrategyLeftError`` when every variant has failed. None for the others."""
        obj = _find(localized, subtask.obj)
        if obj is None:
            return None
        target = _find(localized, subtask.target, exclude=obj.id) if subtask.target else None
        for k in range(GOAL_VARIANTS):
            try:
                plan = goal_plan(subtask, obj, localized, scene, ctx, attempt + k, failed)
            except OutOfReachError:
                break  # no arm reaches it where it lies: the ways below bring it within reach
            if plan is None:
                return None
            plan = clear_first(plan, subtask, obj, target, localized, scene, ctx.table_top_z)
            if not failures or repeats(plan.calls, localized, failures) is None:
                return plan
        # every way failed where the object lies: bring it to where the arms reach it, then plan the goal again
        for alt in self.into_reach(subtask, obj, localized, scene, ctx):
            if repeats(alt.calls, localized, failures) is None:
                return alt
        raise NoStrategyLeftError(f"no different way remains to {subtask.text!r}; failed: {summary(failures)}")

    def _ee_variants(self, subtask: Subtask, localized: dict[str, SceneObject], scene: SceneMemory, attempt: int,
                     ctx: AgentContext, failures: Sequence[FailedAttempt]) -> ActionPlan:
        """End-effector actions (the fine tier): the plan at ``attempt``, else the next grasp in turn that does not
        repeat a failed attempt."""
        obj = _find(localized, subtask.obj)
        if obj is None:
            raise AgentError(f"{subtask.obj.phrase!r} was not localised")
        target = _find(localized, subtask.target, exclude=obj.id) if subtask.target else None
        held_by = holder_of(obj, ctx, list(localized.values()))
        for k in range(GOAL_VARIANTS):
            plan = ee_plan(subtask, obj, target, localized, scene, ctx, attempt + k, held_by)
            if not failures or repeats(plan.calls, localized, failures) is None:
                return plan
        raise NoStrategyLeftError(f"no different way remains to {subtask.text!r}; failed: {summary(failures)}")

    def alternatives(self, subtask: Subtask, obj: SceneObject, localized: dict[str, SceneObject],
                     scene: SceneMemory, ctx: AgentContext) -> list[ActionPlan]:
        """Every other way to do the subtask, in order: each allowed arm directly (then from a lower approach to the
        place, then laying the object down and taking it with another grasp family, ``regrasp.py``), a relay with
        either arm giving, then a nudge by either arm, then pushes from other sides (see ``strategies.py``), then, for
        an object at the back of the table, a pull or a drag towards the robot (``pull.py``)."""
        table_z = ctx.table_top_z
        upright = tall_at_first(obj, scene.initial or scene.objects)
        forced = subtask.arm_hint if subtask.arm_hint in ("left", "right") else None
        arms = [forced] if forced else [side_of(obj), other(side_of(obj))]
        plans: list[ActionPlan] = []
        if subtask.action in ("pick", "handover"):
            takers = [other(forced or side_of(obj))] if subtask.action == "handover" else arms
            plans += [ActionPlan(calls=_take(a, obj.id, upright), strategy=f"direct {a}",
                                 rationale=f"the {a} arm takes {obj.id} directly") for a in takers]
        else:
            target = self._place_target(subtask, obj, localized, scene, table_z, 0)
            plans += [ActionPlan(calls=_grasp_place(a, obj.id, target, upright=upright), strategy=f"direct {a}",
                                 rationale=f"the {a} arm carries {obj.id} to ({target[0]:.3f}, {target[1]:.3f}, "
                                           f"{target[2]:.3f})") for a in arms]
            plans += [low_approach(p) for p in plans]
            others = list(localized.values()) + [o for o in scene.objects if o.id not in localized]
            plans += [r for p in plans[:len(arms)] for r in regrasps(p, obj, others, table_z)]
            for giver in ("left", "right"):
                taker = forced or other(giver)
                if taker == giver:
                    continue
                mx, my = relay_spot(obj.id, scene, localized, target)
                plans.append(ActionPlan(
                    calls=[*_grasp_place(giver, obj.id, (mx, my, table_z), upright=upright),
                           *_grasp_place(taker, obj.id, target, upright=upright)],
                    strategy=f"relay {giver}->{taker}",
                    rationale=f"relay {obj.id}: the {giver} arm puts it at ({mx:.2f}, {my:.2f}), the {taker} arm "
                              "carries it on"))
        return plans + self.into_reach(subtask, obj, localized, scene, ctx)

    @staticmethod
    def into_reach(subtask: Subtask, obj: SceneObject, localized: dict[str, SceneObject], scene: SceneMemory,
                   ctx: AgentContext) -> list[ActionPlan]:
        """The ways that only bring ``obj`` where an arm reaches it: nudges by either arm, then, for an object at
        the back of the table, a pull or a drag towards the robot (``pull.py``). An object in a hand is set down
        instead on a free spot both arms reach (a push would only drop it), to be planned afresh from there."""
        holder = holder_of(obj, ctx, list(localized.values()))
        if holder is not None:
            x, y = relay_spot(obj.id, scene, localized, (0.0, 0.0, 0.0))
            calls = _grasp_place(holder, obj.id, (x, y, ctx.table_top_z),
                                 upright=tall_at_first(obj, scene.initial or scene.objects))[1:]
            return [ActionPlan(calls=calls, strategy=f"set down {holder}",
                               rationale=f"the {holder} arm holds {obj.id} where no way on reaches: it sets it down "
                                         f"at ({x:.2f}, {y:.2f}), where both arms reach, to take it afresh")]
        forced = subtask.arm_hint if subtask.arm_hint in ("left", "right") else None
        toward = forced or side_of(obj)
        return [*nudges(obj, scene, localized, ctx.table_top_z, toward, (toward, other(toward)), ctx.reach),
                *pulls(obj, ctx.table_top_z)]  # an object at the back: pulled from behind or slid by its near end

    def _usual(
        self, subtask: Subtask, localized: dict[str, SceneObject], scene: SceneMemory, attempt: int,
        feedback: str | None, ctx: AgentContext, failed: FailedStep | None = None,
    ) -> ActionPlan:
        obj = _find(localized, subtask.obj)
        if obj is None:
            raise AgentError(f"{subtask.obj.phrase!r} was not localised")
        arm = _pick_arm(subtask, obj, attempt, failed)
        table_z = ctx.table_top_z
        upright = tall_at_first(obj, scene.initial or scene.objects)
        note = _posture_note(obj, scene)
        if subtask.action == "pick":
            return ActionPlan(calls=_take(arm, obj.id, upright),
                              rationale=f"{note}grasp {obj.id} with the {arm} arm and lift it")
        if subtask.action == "handover" and _relay_handover(failed):
            # after a mid-air hand-over found no grasp: the exchange goes through a spot in the middle of the
            # table that both arms reach
            recv = other(arm)
            ox, oy, oz = obj.position_m[0], obj.position_m[1], grasp_height_m(obj, table_z)
            mx, my = relay_spot(obj.id, scene, localized, (0.0, 0.0, 0.0))
            at_relay = math.dist((ox, oy), (mx, my)) < RELAY_TOL_M
            giver_out = not _reaches(ctx, arm, ox, oy, oz) or _unreachable_arm(failed) == arm
            if (giver_out or at_relay) and _reaches(ctx, recv, ox, oy, oz):
                # after a drop or a push the object lies where only the receiver reaches it, or already at the
                # hand-over spot: the receiver takes it directly
                why = "already at the hand-over spot" if at_relay else f"out of the {arm} arm's reach"
                return ActionPlan(calls=_take(recv, obj.id, upright),
                                  rationale=f"{note}{obj.id} at ({ox:.2f}, {oy:.2f}) is {why}: the {recv} arm takes "
                                            "it directly")
            return ActionPlan(calls=[
                *_grasp_place(arm, obj.id, (mx, my, table_z), upright=upright), *_take(recv, obj.id, upright),
            ], rationale=f"{note}the {arm} arm hands {obj.id} over at ({mx:.2f}, {my:.2f}); the {recv} arm takes "
                         "it")
        target_xyz = self._place_target(subtask, obj, localized, scene, table_z, attempt)
        holder = holder_of(obj, ctx, list(localized.values()))
        if holder is not None and subtask.arm_hint in (None, "one", "both", holder):
            # already in hand (e.g. after a handover): place it directly
            calls = _grasp_place(holder, obj.id, target_xyz)[1:]
            return ActionPlan(calls=calls, rationale=f"the {holder} arm already holds {obj.id}; place it at "
                                                     f"({target_xyz[0]:.3f}, {target_xyz[1]:.3f}, {target_xyz[2]:.3f})")
        plan = self._carry(ctx, subtask, obj, arm, target_xyz, localized, scene, table_z,
                           _retry_grasp(attempt, failed, obj.grasp_ids()), _unreachable_arm(failed), upright)
        return plan.model_copy(update={"rationale": note + plan.rationale})

    def _carry(self, ctx: AgentContext, subtask: Subtask, obj: SceneObject, arm: str,
               target_xyz: tuple[float, float, float],
               localized: dict[str, SceneObject], scene: SceneMemory, table_z: float,
               grasp_args: dict[str, float] | None = None, failed_arm: str | None = None,
               upright: bool = False) -> ActionPlan:
        """Grasp and place; when no single arm reaches both ends, relay through a free spot in the middle.

        After an arm found no reachable grasp (``failed_arm``), the other arm grasps: the reach envelope is an
        estimate and the motion planner has the final word, so an object pushed or dropped near its edge is tried
        with the other arm before the subtask is given up.
        """
        ox, oy = obj.position_m[0], obj.position_m[1]
        oz = grasp_height_m(obj, table_z)
        tx, ty = target_xyz[0], target_xyz[1]
        dz = target_xyz[2] - table_z
        forced = subtask.arm_hint in ("left", "right")
        arms = [arm] if forced else [arm, other(arm)]
        if failed_arm in arms and not forced:
            arms = [a for a in arms if a != failed_arm]
        for a in arms:
            if _reaches(ctx, a, ox, oy, oz) and _reaches(ctx, a, tx, ty, dz):
                return ActionPlan(calls=_grasp_place(a, obj.id, target_xyz, grasp_args, upright), rationale=(
                    f"move {obj.id} to ({tx:.3f}, {ty:.3f}, {target_xyz[2]:.3f}) with the {a} arm"))
        for a in arms:  # the object lies where only a leaned grasp reaches it
            if _reaches(ctx, a, ox, oy, oz, leaning=True) and _reaches(ctx, a, tx, ty, dz):
                return ActionPlan(calls=_grasp_place(a, obj.id, target_xyz, grasp_args, upright), rationale=(
                    f"move {obj.id} from ({ox:.2f}, {oy:.2f}), at the edge of the {a} arm's reach, to "
                    f"({tx:.3f}, {ty:.3f}, {target_xyz[2]:.3f})"))
        if forced and failed_arm == other(arm):  # the relay's giver found no grasp: the named arm tries itself
            return ActionPlan(calls=_grasp_place(arm, obj.id, target_xyz, grasp_args, upright), rationale=(
                f"the {failed_arm} arm found no grasp of {obj.id} to bring it over: the {arm} arm tries it directly "
                f"and carries it to ({tx:.3f}, {ty:.3f}, {target_xyz[2]:.3f})"))
        if forced:  # the named arm places the object; the other one first brings it within that arm's reach
            giver, taker = other(arm), arm
        else:
            giver = side_of(obj)
            if failed_arm is not None:
                giver = other(failed_arm)
                if _reaches(ctx, giver, tx, ty, dz):
                    return ActionPlan(calls=_grasp_place(giver, obj.id, target_xyz, grasp_args, upright), rationale=(
                        f"the {failed_arm} arm found no grasp of {obj.id}: the {giver} arm tries it and carries it "
                        f"to ({tx:.3f}, {ty:.3f}, {target_xyz[2]:.3f})"))
            taker = other(giver)
        if not _reaches(ctx, taker, tx, ty, dz):
            raise AgentError(f"no arm can carry {obj.id} from ({ox:.2f}, {oy:.2f}) to ({tx:.2f}, {ty:.2f})"
                               + (f" with the {arm} arm placing it" if forced else ""))
        mx, my = relay_spot(obj.id, scene, localized, target_xyz)
        relay = (mx, my, table_z)
        calls = [*_grasp_place(giver, obj.id, relay, grasp_args, upright),
                 *_grasp_place(taker, obj.id, target_xyz, upright=upright)]
        return ActionPlan(calls=calls,
                          rationale=f"relay {obj.id}: the {giver} arm puts it at ({mx:.2f}, {my:.2f}), "
                                    f"the {taker} arm takes it to ({tx:.3f}, {ty:.3f}, {target_xyz[2]:.3f})")

    def _place_target(self, subtask: Subtask, obj: SceneObject, localized: dict[str, SceneObject],
                      scene: SceneMemory, table_z: float, attempt: int) -> tuple[float, float, float]:
        rel = subtask.relation
        if rel == "slot" and subtask.layout == "cross":
            x, y = cross_slot(subtask.slot or 0)
            return (x, y, table_z)
        if rel == "center":
            return centre_target(obj, scene, localized, table_z)
        if rel == "slot":
            group = [_find(localized, r) for r in subtask.group]
            ids = [g.id for g in group if g is not None]
            slots = slot_targets(ids, scene, len(subtask.group))  # a member not found now keeps its slot
            x, y = slots[subtask.slot or 0]
            return (x, y, table_z)
        if rel == "at":
            of = subtask.memory[0].of if subtask.memory else obj.id
            remembered = next((o for o in scene.initial if o.id == of or _key_matches(o, of)), None)
            if remembered is None:
                raise AgentError(f"no remembered location of {of}")
            return (remembered.position_m[0], remembered.position_m[1], table_z)
        tgt = None
        if subtask.target is not None:
            tgt = _find(localized, subtask.target, exclude=obj.id)
        if tgt is None:
            raise AgentError(f"no localised target for {subtask.text!r}")
        tx, ty, tz = tgt.position_m
        top_z = tz + tgt.size_m[2] / 2
        if rel == "on":
            drop = drop_point(tgt, obj, {**{o.id: o for o in scene.objects}, **localized}.values(),
                              scene.initial)
            if drop is not None:  # a tray's halves: the free one on the object's side
                return (drop[0], drop[1], max(drop[2], top_z - 0.01) + 0.005)
            fp1 = tgt.point("fp1")
            if fp1 is not None and is_container(tgt) is False:
                return (tx, ty, max(top_z, fp1[2]))
            return (tx, ty, top_z)
        if rel == "in":
            if is_container(tgt):
                inside = tgt.point("center") or (tx, ty, 0.0)  # the model's floor centre (a pan's, not its handle's)
                return (inside[0], inside[1], floor_z(tgt) + 0.002)
            return (tx, ty, tz - tgt.size_m[2] / 2 + 0.01)
        gap = SIDE_GAP_M + 0.01 * attempt
        if rel == "left_of":
            return (tx - gap, ty, table_z)
        if rel == "right_of":
            return (tx + gap, ty, table_z)
        if rel == "front_of":
            return (tx, ty - gap, table_z)
        if rel == "behind":
            return (tx, ty + gap, table_z)
        # next_to: on the side facing the object's current position
        sign = -1.0 if obj.position_m[0] < tx else 1.0
        return (tx + sign * gap, ty, table_z)


def clear_first(plan: ActionPlan, subtask: Subtask, obj: SceneObject, target: SceneObject | None,
                localized: dict[str, SceneObject], scene: SceneMemory, table_z: float) -> ActionPlan:
    """The plan with what rests on the object (or on the target it is to be stacked on) moved aside first, by the
    arm on that thing's side: a block under another cannot be taken, nor can one go onto a covered block. What
    lies on a wide target (a tray: ``wide_target``) stays; the object goes beside it."""
    if subtask.action not in ("pick", "place", "stack", "move", "turn", "hang", "lift", "handover"):
        return plan
    wide = target is not None and wide_target(Box.of_scene(obj), Box.of_scene(target))  # a tray: put beside them
    blockers = [o for base in (obj, target) if base is not None and (base is obj or (subtask.relation == "on"
                                                                                        and not wide))
                for o in tops_of(base, scene, localized) if o.id in localized and o.id != obj.id]
    if not blockers:
        return plan
    calls: list[SkillCall] = []
    for b in blockers:
        arm = side_of(b)
        x, y = aside_spot(b, scene, localized)
        calls += _grasp_place(arm, b.id, (x, y, table_z))
    names = ", ".join(b.id for b in blockers)
    return plan.model_copy(update={"calls": [*calls, *plan.calls],
                                   "rationale": f"first {names} off it, out of the way; then {plan.rationale}"})


def _relay_handover(failed: FailedStep | None) -> bool:
    """Whether a hand-over goes through the table: after a mid-air hand-over whose grasp could not be made."""
    return failed is not None and failed.skill == "grasp_actor" and failed.kind in REACH_KINDS


def _posture_note(obj: SceneObject, scene: SceneMemory) -> str:
    """"<id> lies on its side: ... " when a tall object was toppled, else ""."""
    first = first_seen(obj, scene.initial)
    if not lies_on_side(obj, first) or first is None:
        return ""
    return (f"{obj.id} lies on its side ({obj.size_m[2]:.2f} m tall, {first.size_m[2]:.2f} m when first seen): "
            "upright_actor stands it up first; ")


def _key_matches(o: SceneObject, key: str) -> bool:
    return key in (o.id, f"{o.color}_{o.label}", o.label)


def _find(localized: dict[str, SceneObject], ref: ObjectRef, exclude: str | None = None) -> SceneObject | None:

    try:
        name = resolve(ref, candidates_of(list(localized.values())), exclude=[exclude] if exclude else [],
                       allow_color_only=True).name
    except ResolutionError:
        return None
    return localized[name]
