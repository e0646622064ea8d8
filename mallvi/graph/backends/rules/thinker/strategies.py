"""The rules Thinker's alternative strategies, tried in order when the usual plan would repeat a failed attempt.

For a carry: each allowed arm directly, a relay through the middle of the table with either arm giving, then a
nudge (the closed gripper pushes the object ``NUDGE_M`` back into an arm's reach or away from a neighbour it leans
on; the subtask is then planned again for the object's new pose). When that push's start has no IK (an object at
the table's front edge or next to an arm's base, where the fingers cannot get behind it), pushes from other sides
follow (``nudges``): each of ``PUSH_DIRECTIONS`` that brings the object nearer an arm's reach and whose finger path
the pushing arm's reach envelope covers. For a pick or a hand-over: the other arm taking it, then the nudges. The
Reflector adds the last one, a re-scan, when none of these is left.

Before any of these: a block that a miss or a slip left near the edge of its arm's reach, where the next miss may
push it out (a miss pushes along the fingers, and often the same way again), is first pushed back towards the
middle of that reach, in the same attempt as the grasp (``steer_back``); so is a tall object a fault laid on its
side within its length of that edge.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from mallvi.contracts.geometry import ArmSide
from mallvi.contracts.station import ReachEnvelope
from mallvi.graph.backends.rules.thinker import features as ft
from mallvi.graph.failure_memory import GRASP_SKILLS, FailedAttempt
from mallvi.graph.posture import first_seen, lies_on_side
from mallvi.graph.schemas import ActionPlan, SceneMemory, SceneObject, SkillCall
from mallvi.robot_drivers.safety.guard import SafetyConfig

TOP_DOWN_EE_WXYZ = [0.5, -0.5, 0.5, 0.5]
"""End-effector orientation of a push: its x axis (the approach) pointing down, the fingers along world x. Probed
in the simulator at 0.90 m (the push's start height): both arms reach it over the front half of the table; with the
fingers along world y the right arm found no IK anywhere from x = 0.12 to 0.20 (y -0.20 to 0.0)."""
EE_ABOVE_GRASP_CENTRE_M = SafetyConfig().tcp_offset_m
"""A downward end effector's frame lies this far above its grasp centre (the SkillAPI's convention)."""
NUDGE_M = 0.06
NUDGE_CLEAR_M = 0.04  # the closed fingers come down this far from the object's side
PALM_HALF_M = (0.055, 0.0225)
"""Half the hand's extent (the gripper body of piper_arm.urdf, 0.110 x 0.045 m) along its finger opening axis and
across it. With the fingers along world x (``TOP_DOWN_EE_WXYZ``) the hand reaches this far past the fingers' centre
along x and y, 6 cm above the grasp centre (``PALM_ABOVE_GRASP_CENTRE_M``)."""
PALM_ABOVE_GRASP_CENTRE_M = 0.06  # piper_dh: TCP_OFFSET_M - FINGER_BASE_M
PALM_CLEAR_M = 0.01
"""Beside an object taller than the palm's height, the hand comes down this far from its side. In the simulator,
a standing 0.20 m bar at (-0.29, -0.07): the closed fingers coming down 4 cm from its side (the palm 1.5 cm
inside it) threw it 40 cm; 6 cm from it, they came down clear and the push laid it down 13 cm further in."""
NUDGE_CENTRE_ABOVE_BOTTOM_M = 0.03  # the grasp centre's height above the object's bottom while pushing
NUDGE_RISE_M = 0.06  # the fingers come down from, and go back up to, this far above the object's top
NEIGHBOUR_M = 0.08  # an object whose centre is this close is one the nudged object may lean on
REACH_SPOTS_M = {"left": (-0.12, -0.05), "right": (0.12, -0.05)}  # well inside each arm's reach at table height
PUSH_DIRECTIONS = 8
"""Pushes from other sides are tried in this many directions, evenly spread (45° apart)."""
OTHER_SIDES_PER_ARM = 2
"""At most this many pushes from other sides per arm, the ones that bring the object nearest the reach spot."""
MISS_PUSH_M = 0.10
"""A block closer than this to the edge of its arm's reach may leave it with the next miss (a miss pushes a block
6-8 cm along the fingers)."""
SURE_Y_M = 0.05
"""The Station's envelope reaches this much past the front and back where grasps were measured (piper_reach.py); a
push that should not fail starts this far inside them (at the front edge the fingers found no IK)."""
LOW_PRE_PLACE_M = 0.05
"""The pre-place point of a place from a lower approach: this far above the target instead of 8 cm (3 cm let a held
block sweep the top block off a stack on its way in, in the simulator)."""
DRIFT_KINDS = ("grasp_empty", "not_holding", "execution")
"""Failures after which the object lies where a miss pushed it or a slip dropped it."""
MIN_TURN_RAD = math.radians(30.0)  # a push from another side differs this much at least from the usual one


def push_direction(obj: SceneObject, others: list[SceneObject], toward: tuple[float, float]) -> tuple[float, float]:
    """A unit xy direction: away from the nearest neighbour within ``NEIGHBOUR_M``, else towards ``toward``. What
    lies in a container is pushed along with it, not leaned on."""
    ox, oy = obj.position_m[0], obj.position_m[1]
    near = sorted(((math.dist((ox, oy), o.position_m[:2]), o) for o in others
                   if o.id != obj.id and not (ft.is_container(obj) and _within(o, obj))),
                  key=lambda d_o: d_o[0])  # two objects at the same distance (a stack) are not compared
    if near and near[0][0] < NEIGHBOUR_M and near[0][0] > 1e-6:
        nx, ny = near[0][1].position_m[0], near[0][1].position_m[1]
        d = (ox - nx, oy - ny)
    else:
        d = (toward[0] - ox, toward[1] - oy)
    n = math.hypot(*d)
    return (d[0] / n, d[1] / n) if n > 1e-6 else (0.0, -1.0)


def _within(o: SceneObject, box: SceneObject) -> bool:
    """Whether ``o``'s centre lies inside ``box``'s footprint (as perceived, world-aligned) and above its bottom."""
    return (abs(o.position_m[0] - box.position_m[0]) < box.size_m[0] / 2
            and abs(o.position_m[1] - box.position_m[1]) < box.size_m[1] / 2
            and o.position_m[2] > box.position_m[2] - box.size_m[2] / 2)


def extent_along(obj: SceneObject, direction: tuple[float, float]) -> float:
    """How far ``obj``'s box (world-aligned, as perceived) reaches from its centre along the xy unit ``direction``:
    half its width for a push square to a side, half its length for a push along a lying bar."""
    return abs(direction[0]) * obj.size_m[0] / 2 + abs(direction[1]) * obj.size_m[1] / 2


def clearance(obj: SceneObject, direction: tuple[float, float], table_z: float) -> tuple[float, float]:
    """How far from ``obj``'s side, along the push ``direction``, the closed fingers come down, and how far ahead of
    them the part of the hand that meets the object first is: (``NUDGE_CLEAR_M``, 0) for the fingers; for an
    object whose top stands above the palm while the fingers push, the palm leads the push and comes down
    ``PALM_CLEAR_M`` from the object."""
    bottom = max(table_z, obj.position_m[2] - obj.size_m[2] / 2)
    top = obj.position_m[2] + obj.size_m[2] / 2
    palm_z = bottom + min(NUDGE_CENTRE_ABOVE_BOTTOM_M, obj.size_m[2] / 2) + PALM_ABOVE_GRASP_CENTRE_M
    lead = abs(direction[0]) * PALM_HALF_M[0] + abs(direction[1]) * PALM_HALF_M[1]
    if top <= palm_z or lead + PALM_CLEAR_M <= NUDGE_CLEAR_M:
        return NUDGE_CLEAR_M, 0.0
    return lead + PALM_CLEAR_M, lead


def nudge(arm: str, obj: SceneObject, scene: SceneMemory, localized: dict[str, SceneObject], table_z: float,
          toward_arm: str, direction: tuple[float, float] | None = None) -> ActionPlan:
    """Close the gripper, come down beside ``obj`` and push it ``NUDGE_M`` (along ``direction``, by default towards
    ``toward_arm``'s reach or away from a neighbour it leans on), then rise and go home."""
    others = list(localized.values()) + [o for o in scene.objects if o.id not in localized]
    ux, uy = direction or push_direction(obj, others, REACH_SPOTS_M[toward_arm])
    ox, oy, oz = obj.position_m
    half = extent_along(obj, (ux, uy))
    bottom = max(table_z, oz - obj.size_m[2] / 2)
    centre_z = bottom + min(NUDGE_CENTRE_ABOVE_BOTTOM_M, obj.size_m[2] / 2)
    top = oz + obj.size_m[2] / 2
    clear, lead = clearance(obj, (ux, uy), table_z)
    sx, sy = ox - ux * (half + clear), oy - uy * (half + clear)
    high = top + NUDGE_RISE_M + EE_ABOVE_GRASP_CENTRE_M
    low = centre_z + EE_ABOVE_GRASP_CENTRE_M
    a = arm
    travel = clear - lead + NUDGE_M  # the hand closes the gap to the object's side, then pushes it NUDGE_M
    calls = [
        SkillCall(skill="close_gripper", arm=a, object=obj.id),  # type: ignore[arg-type]
        SkillCall(skill="move_to_pose", arm=a, target_pose=[sx, sy, high, *TOP_DOWN_EE_WXYZ]),  # type: ignore[arg-type]
        SkillCall(skill="move_by_displacement", arm=a, args={"z": low - high}),  # type: ignore[arg-type]
        SkillCall(skill="move_by_displacement", arm=a, args={"x": ux * travel, "y": uy * travel}),  # type: ignore[arg-type]
        SkillCall(skill="move_by_displacement", arm=a, args={"z": high - low}),  # type: ignore[arg-type]
        SkillCall(skill="back_to_origin", arm=a),  # type: ignore[arg-type]
        SkillCall(skill="open_gripper", arm=a),  # type: ignore[arg-type]
    ]
    usual = direction is None
    return ActionPlan(calls=calls, strategy=f"nudge {a}" if usual else f"nudge {a} from another side", rationale=(
        f"the {a} arm pushes {obj.id} {NUDGE_M * 100:.0f} cm from ({ox:.2f}, {oy:.2f}) towards "
        f"({ox + ux * NUDGE_M:.2f}, {oy + uy * NUDGE_M:.2f}) with its gripper closed; the subtask is planned again "
        "from there"))


def finger_path(obj: SceneObject, direction: tuple[float, float],
                table_z: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """Where a push along ``direction`` starts and ends (the closed fingers' xy, world frame)."""
    ux, uy = direction
    ox, oy = obj.position_m[0], obj.position_m[1]
    clear, lead = clearance(obj, direction, table_z)
    back = extent_along(obj, direction) + clear
    start = (ox - ux * back, oy - uy * back)
    travel = clear - lead + NUDGE_M
    return start, (start[0] + ux * travel, start[1] + uy * travel)


def nudges(obj: SceneObject, scene: SceneMemory, localized: dict[str, SceneObject], table_z: float,
           toward_arm: str, pushers: tuple[str, ...], reach: Mapping[ArmSide, ReachEnvelope]) -> list[ActionPlan]:
    """The usual push by each of ``pushers``, then pushes from other sides: per arm, up to
    ``OTHER_SIDES_PER_ARM`` of the ``PUSH_DIRECTIONS`` that end nearer ``toward_arm``'s reach spot, whose finger
    path (start and end) the pushing arm's envelope covers (its standing or its leaned grasps': an estimate, the
    motion planner has the final word), nearest first. A usual push whose path the arm's envelope does not cover
    comes last (the left arm would start a push of an object at the right arm's base beyond its reach)."""
    others = list(localized.values()) + [o for o in scene.objects if o.id not in localized]
    usual = push_direction(obj, others, REACH_SPOTS_M[toward_arm])
    spot = REACH_SPOTS_M[toward_arm]
    ox, oy = obj.position_m[0], obj.position_m[1]
    now = math.dist((ox, oy), spot)
    height = max(0.0, obj.position_m[2] - obj.size_m[2] / 2 - table_z) + NUDGE_CENTRE_ABOVE_BOTTOM_M

    def covered(arm: str, u: tuple[float, float]) -> bool:
        env = reach.get("left" if arm == "left" else "right")
        return env is None or all(_reachable(env, x, y, height) for x, y in finger_path(obj, u, table_z))

    plans = [nudge(a, obj, scene, localized, table_z, toward_arm) for a in pushers if covered(a, usual)]
    beyond = [nudge(a, obj, scene, localized, table_z, toward_arm) for a in pushers if not covered(a, usual)]
    ranked: list[tuple[float, tuple[float, float]]] = []
    for k in range(PUSH_DIRECTIONS):
        a = 2 * math.pi * k / PUSH_DIRECTIONS
        u = (math.cos(a), math.sin(a))
        turn = math.acos(max(-1.0, min(1.0, u[0] * usual[0] + u[1] * usual[1])))
        after = math.dist((ox + u[0] * NUDGE_M, oy + u[1] * NUDGE_M), spot)
        if turn >= MIN_TURN_RAD and after < now:
            ranked.append((after, u))
    ranked.sort()
    for arm in pushers:
        side: ArmSide = "left" if arm == "left" else "right"
        env = reach.get(side)
        if env is None:
            continue
        fits = [u for _, u in ranked
                if all(_reachable(env, x, y, height) for x, y in finger_path(obj, u, table_z))][:OTHER_SIDES_PER_ARM]
        plans += [nudge(arm, obj, scene, localized, table_z, toward_arm, u) for u in fits]
    return plans + beyond


def _reachable(env: ReachEnvelope, x: float, y: float, height_m: float) -> bool:
    return env.reaches(x, y, height_m) or env.reaches(x, y, 0.0, leaning=True)


def steer_back(obj: SceneObject, arm: str, scene: SceneMemory, localized: dict[str, SceneObject], table_z: float,
               reach: Mapping[ArmSide, ReachEnvelope], margin_m: float = MISS_PUSH_M) -> ActionPlan | None:
    """A push by ``arm`` that brings ``obj`` from the edge of that arm's reach back towards its middle, or None
    when ``obj`` lies ``margin_m`` inside the reach on every side, or when the push would not start and end
    surely within reach (``SURE_Y_M`` inside the envelope's front and back)."""
    side: ArmSide = "left" if arm == "left" else "right"
    env = reach.get(side)
    if env is None:
        return None
    height = max(0.0, obj.position_m[2] - obj.size_m[2] / 2 - table_z) + NUDGE_CENTRE_ABOVE_BOTTOM_M

    def sure(px: float, py: float, h: float = 0.0) -> bool:
        return all(env.reaches(px, py + dy, h) for dy in (-SURE_Y_M, 0.0, SURE_Y_M))

    x, y = obj.position_m[0], obj.position_m[1]
    m = margin_m
    if all(sure(x + dx, y + dy) for dx, dy in ((0.0, 0.0), (m, 0.0), (-m, 0.0), (0.0, m), (0.0, -m))):
        return None
    spot = REACH_SPOTS_M[side]
    others = list(localized.values()) + [o for o in scene.objects if o.id not in localized]
    u = push_direction(obj, others, spot)
    if math.dist((x + u[0] * NUDGE_M, y + u[1] * NUDGE_M), spot) >= math.dist((x, y), spot):
        return None  # the push would go away from a neighbour, not back into reach
    if not all(sure(px, py, height) for px, py in finger_path(obj, u, table_z)):
        return None
    return nudge(arm, obj, scene, localized, table_z, arm, u)


def steered(plan: ActionPlan, obj: SceneObject | None, failures: Sequence[FailedAttempt],
            localized: dict[str, SceneObject], scene: SceneMemory, table_z: float,
            reach: Mapping[ArmSide, ReachEnvelope]) -> ActionPlan:
    """``plan`` after a push that brings ``obj`` back from the edge of the grasping arm's reach (``steer_back``),
    when the last failure left it where the next miss may carry it out: a block after a miss or a slip
    (``DRIFT_KINDS``), within ``MISS_PUSH_M`` of the edge; a tall object lying on its side after any failure (a
    fault put it down), within its length of the edge (a miss at its top end pushes it along its axis by nearly
    that much). Else ``plan`` itself."""
    first = plan.calls[0] if plan.calls else None
    if obj is None or not failures or first is None or first.skill not in GRASP_SKILLS or first.object != obj.id:
        return plan
    lying = first.skill == "upright_actor" and lies_on_side(obj, first_seen(obj, scene.initial))
    if not lying and (first.skill != "grasp_actor" or failures[-1].kind not in DRIFT_KINDS):
        return plan
    margin = max(MISS_PUSH_M, max(obj.size_m[0], obj.size_m[1])) if lying else MISS_PUSH_M
    back = steer_back(obj, first.arm, scene, localized, table_z, reach, margin)
    if back is None:
        return plan
    return ActionPlan(calls=[*back.calls, *plan.calls], strategy=f"nudge back, then {plan.strategy or 'carry'}",
                      rationale=f"{back.rationale}; then {plan.rationale}")


def low_approach(plan: ActionPlan) -> ActionPlan:
    """``plan`` with each place coming down from ``LOW_PRE_PLACE_M`` above its target: for a place whose pre-place
    point had no IK (high on a stack, at the back of the reach)."""
    calls = [c.model_copy(update={"args": {**c.args, "pre_dis": LOW_PRE_PLACE_M}}) if c.skill == "place_actor" else c
             for c in plan.calls]
    return ActionPlan(calls=calls, strategy=f"{plan.strategy}, low approach",
                      rationale=f"{plan.rationale}, coming down from {LOW_PRE_PLACE_M * 100:.0f} cm above the target")
