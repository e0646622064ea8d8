"""Rules Reflector: re-observe, re-perceive and check the subtask's post-condition geometrically.

When the main camera does not find the subtask's object, the scene is judged from the first extra camera that
does (``AgentContext.extra_views``).

Blame: an Actor failure is blamed as the Actor classified it by its failure kind (reach, planning, guard ->
Thinker; grasp -> Projector; object matching -> Grounder); an object that is gone from view -> Grounder; an
object that did not move -> Projector (the grasp point); an object that moved to the wrong place -> Thinker.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
from scipy.spatial.transform import Rotation

from mallvi.contracts.observation import Observation
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.goals import ON_XY_MAX_M, Box, PredicateResult, evaluate, relation_holds, wide_target
from mallvi.graph.ports import AgentContext
from mallvi.graph.refs import Candidate, ResolutionError, candidates_of, canonical_label, refs_of, resolve
from mallvi.graph.scene_memory import NESTED_PREFIX, aligned_names, as_wide, nest_seen
from mallvi.graph.schemas import ActorReport, SceneObject, Subtask, Verdict
from mallvi.perception.projection import project
from mallvi.robot_drivers.safety.guard import SafetyConfig

PLACE_TOL_M = 0.02  # a slot or a remembered spot: within 2 cm (rows may differ by 3 cm between neighbours)
CENTRE_TOL_M = 0.025  # an object put at the work centre: within 2.5 cm of the spot chosen there
WIDE_AIM_TOL_M = 0.03  # an object put on a wide target: within 3 cm of the point aimed at on it
EE_LET_GO_TOL_M = 0.03  # Tier 3: an object let go of lies within 3 cm of where the hand held it then
EE_TOOK_NEAR_M = 0.10  # ... taken by fingers that closed with their grasp centre this near its point
TCP_OFFSET_M = SafetyConfig().tcp_offset_m
MOVED_MIN_M = 0.01
HOLD_OPEN_MIN, HOLD_OPEN_MAX = 0.02, 0.85
HOLD_DIST_M = 0.25
TILTED_HEIGHT_RATIO = 1.6  # an alike object by a nest seen this many times as tall as one stands tilted on a rim
STAND_LEVEL_TOL_M = 0.015  # two objects whose bottoms are this close stand on one surface
STAND_OVERLAP_M = 0.01  # ... and cannot overlap by more than this (inscribed circles; rotated blocks included)
FLAT_M = 0.015  # a pad or a sliver at the image's edge: nothing stands on the surface there
EMPTY_BEYOND_M = 0.02  # depth this far beyond where an object's top would be: the camera sees past its place
EMPTY_WINDOW_PX = 2  # ... on every pixel of a (2r+1)^2 window
TABLE_SEEN_TOL_M = 0.01  # depth within this of a point on the table top: the camera sees the table there


class RulesReflector:
    def reflect(
        self, subtask: Subtask, report: ActorReport, before: dict[str, SceneObject], obs: Observation,
        ctx: AgentContext, log: CallLog,
    ) -> Verdict:
        fresh = ctx.perception.scan(obs)
        if not _finds(subtask, fresh) and not _nest_shown(subtask, before, fresh):
            # judged from another camera when the main one lost the object (not when it shows it nested as one
            # with its container)
            for view in ctx.extra_views.values():
                other_view = ctx.perception.scan(view())
                if _finds(subtask, other_view):
                    fresh = other_view
                    break
        fresh = align_ids(fresh, before, subtask, report.put_at())
        cands = candidates_of(fresh)
        if not report.ok:
            blamed = report.failed_stage or "actor"
            if blamed in ("projector", "actor") and _moved(subtask, before, fresh):
                blamed = "grounder"  # the object was pushed or dropped: find it again before retrying
            failure = Verdict(verdict="failure", failure_category="execution_failed", blamed_agent=blamed,
                              explanation=report.message, failed_step=report.failed_step)
            if not report.only_retreat_failed():
                return failure
            # everything up to the arm's way back worked: what the scene shows decides (the arm is where the
            # Actor's clean-up left it; the next subtask's first motion, or its retry's parking, starts from there)
            judged = self._judge(subtask, report, before, fresh, cands, ctx)
            if judged.verdict != "success":
                return failure.model_copy(update={"explanation": f"{report.message}; and {judged.explanation}"})
            arm = report.failed_step.arm if report.failed_step is not None else "one"
            way = "get home" if report.failed_step is None or report.failed_step.skill == "back_to_origin" else \
                "rise clear after letting go"
            return judged.model_copy(update={"explanation": f"{judged.explanation} (the {arm} arm did not {way}: "
                                                            f"{report.message})"})
        return self._judge(subtask, report, before, fresh, cands, ctx)

    def _judge(self, subtask: Subtask, report: ActorReport, before: dict[str, SceneObject], fresh: list[SceneObject],
               cands: list[Candidate], ctx: AgentContext) -> Verdict:
        """The subtask's outcome from the fresh scan ``fresh`` after actions that ran."""
        boxes: dict[str, Box] = {}
        placed_xy: dict[str, tuple[float, float]] = {}  # where a place's target point (fp0) of each object is
        key = subtask.obj.key()
        remembered: list[str] = []
        before_cands = candidates_of(list(before.values()))
        seen = {c.name for c in cands}
        for ref in refs_of(subtask):
            try:
                if ref.instance is not None and ref.instance not in seen:
                    # the bound object is not in view: another that fits its words is not it
                    raise ResolutionError(f"{ref.instance} is not seen")
                name = resolve(ref, cands, allow_color_only=True).name
                seen_obj = next(o for o in fresh if o.id == name)
                boxes[ref.key()] = Box.of_scene(seen_obj)
                placed_xy[ref.key()] = _placed_xy(seen_obj)
                continue
            except ResolutionError:
                pass
            if ref.key() == key:
                continue
            # a reference object this subtask did not move may now be hidden (e.g. under the placed block):
            # its position from before the action still holds
            with contextlib.suppress(ResolutionError):
                boxes[ref.key()] = Box.of_scene(before[resolve(ref, before_cands, allow_color_only=True).name])
                remembered.append(ref.key())
        nested = None
        if key not in boxes and subtask.relation == "in" and subtask.target is not None:
            nested = _nested(subtask, before, before_cands, fresh)
            if nested is not None:  # seen as one with the container it was put in
                boxes[key] = Box.of_scene(nested)
                placed_xy[key] = _placed_xy(nested)
        held_state = {arm: _holding(ctx, arm, boxes.get(key)) for arm in ("left", "right")}
        counted = _count_check(subtask, fresh, boxes, ctx.table_top_z) if _group_member(subtask) else None
        if counted is not None and all(r.holds for r in counted):  # alike objects: their number there decides
            return Verdict(verdict="success", explanation="; ".join(r.detail for r in counted))
        if key not in boxes and not any(held_state.values()):
            return Verdict(verdict="failure", failure_category="object_lost", blamed_agent="grounder",
                           explanation=f"{subtask.obj.phrase} is not visible after the action")
        results = evaluate(subtask.post, boxes, ctx.table_top_z,
                           held=lambda arm: key if held_state.get(arm) else None)
        results = counted or results
        failed = [r for r in results if not r.holds]
        target = report.put_at()
        if report.relay and key in boxes:  # set down where the other arm takes it: planned again from there
            return self._wrong_place(subtask, before, boxes, f"{subtask.obj.phrase} was set down for the other arm "
                                                             "to take, not yet put in its place")
        if target is None and key in boxes and subtask.relation is not None and (
                (subtask.relation in ("slot", "at") and _moved_only(report))
                or (subtask.action in ("place", "stack", "move", "turn") and _pushed_only(report))):
            # a push, pull or topple only brings the object within reach (a turn sets it down turned, a push does
            # not turn it); the subtask is planned again from there
            return Verdict(verdict="failure", failure_category="wrong_placement", blamed_agent="thinker",
                           explanation=f"{subtask.obj.phrase} was moved, not yet put in its place")
        if target is not None and key in boxes and subtask.relation in ("slot", "at", "center"):
            d = math.dist(placed_xy.get(key, boxes[key].centre_m[:2]), target[:2])
            if d > (CENTRE_TOL_M if subtask.relation == "center" else PLACE_TOL_M):
                failed_text = f"{subtask.obj.phrase} is {d * 100:.1f} cm from its target"
                return self._wrong_place(subtask, before, boxes, failed_text)
        tkey = subtask.target.key() if subtask.target is not None else None
        if (target is not None and key in boxes and subtask.relation == "on" and tkey in boxes
                and wide_target(boxes[key], boxes[tkey])):
            # anywhere on a tray holds "on", but the Thinker aimed at a point of it (a scale's middle, a drop
            # point): a slip or a shove since moved the object off it
            d = math.dist(placed_xy.get(key, boxes[key].centre_m[:2]), target[:2])
            if d > WIDE_AIM_TOL_M:
                return self._wrong_place(subtask, before, boxes, f"{subtask.obj.phrase} is {d * 100:.1f} cm from "
                                                                 f"where it was put on {boxes[tkey].name}")
        moved_to = _ee_release_xy(report, _before_xyz(subtask, before, before_cands))
        if moved_to is not None and key in boxes and subtask.relation is not None:
            # Tier 3: the object must lie where the hand let go of it (a slip after, or a shove, moved it)
            d = math.dist(placed_xy.get(key, boxes[key].centre_m[:2]), moved_to)
            if d > EE_LET_GO_TOL_M:
                return self._wrong_place(subtask, before, boxes,
                                         f"{subtask.obj.phrase} is {d * 100:.1f} cm from where the hand let go of it")
        if failed:
            text = "; ".join(f"{r.predicate} does not hold ({r.detail})" for r in failed)
            return self._wrong_place(subtask, before, boxes, text)
        if (leaning := _leaning_alike(subtask, before, fresh, boxes)) is not None:
            return self._wrong_place(subtask, before, boxes, leaning)
        if (dropped := _not_held(subtask, held_state, ctx, boxes.get(key))) is not None:
            return self._wrong_place(subtask, before, boxes, dropped)
        detail = "; ".join(f"{r.predicate}: {r.detail}" for r in results) or "the actions succeeded"
        if remembered:
            detail += f" (hidden now, position from before the action: {', '.join(remembered)})"
        if nested is not None:
            detail += (f" ({subtask.obj.phrase} is seen as one with {nested.source.removeprefix(NESTED_PREFIX)}: "
                       f"nested in it, the pair stands taller than it stood alone)")
        return Verdict(verdict="success", explanation=detail)

    @staticmethod
    def _wrong_place(subtask: Subtask, before: dict[str, SceneObject], boxes: dict[str, Box], text: str) -> Verdict:
        key = subtask.obj.key()
        prior = next((o for o in before.values() if o.color == subtask.obj.color and
                      (subtask.obj.color or o.id == key)), None)
        if prior is not None and key in boxes and math.dist(prior.position_m, boxes[key].centre_m) < MOVED_MIN_M:
            return Verdict(verdict="failure", failure_category="grasp_failed", blamed_agent="projector",
                           explanation=f"{subtask.obj.phrase} did not move: {text}")
        return Verdict(verdict="failure", failure_category="wrong_placement", blamed_agent="thinker",
                       explanation=text)


def taken_spot(obj_id: str, spot_m: tuple[float, float, float], size_m: tuple[float, float, float],
               fresh: list[SceneObject], skip: set[str]) -> str | None:
    """Why the object ``obj_id``, put with its bottom centre at ``spot_m`` and not seen now, cannot be hidden
    there, or None: another object seen stands on the same surface where it would stand (two objects standing
    side by side cannot overlap). ``skip``: the objects it was put on or by (a pad under it)."""
    width = min(size_m[0], size_m[1])
    for o in fresh:
        if o.id == obj_id or o.id in skip or o.size_m[2] < FLAT_M:
            continue
        if abs(Box.of_scene(o).bottom_z - spot_m[2]) > STAND_LEVEL_TOL_M:
            continue
        overlap = (width + min(o.size_m[0], o.size_m[1])) / 2 - math.dist(o.position_m[:2], spot_m[:2])
        if overlap > STAND_OVERLAP_M:
            return (f"{o.id} stands where {obj_id} was put, {overlap * 100:.1f} cm into its place, so {obj_id} "
                    "is not hidden there")
    return None


def seen_empty(obs: Observation, spot_m: tuple[float, float, float], height_m: float) -> bool:
    """Whether the camera sees past where an object ``height_m`` tall would stand with its bottom centre at
    ``spot_m``: every pixel of a small window at its top centre shows depth more than ``EMPTY_BEYOND_M`` beyond
    that point (the surface behind it), so nothing stands there, nor hides it. False where the point is out of
    the image, depth is missing, or the object is too flat to tell."""
    if height_m < FLAT_M:
        return False
    seen = _window_depth(obs, (spot_m[0], spot_m[1], spot_m[2] + height_m))
    return seen is not None and seen[0] > seen[1] + EMPTY_BEYOND_M


def _window_depth(obs: Observation, point_m: tuple[float, float, float]) -> tuple[float, float] | None:
    """(the nearest depth on the ``EMPTY_WINDOW_PX`` window around where ``point_m`` projects, the point's own
    depth), or None where the point is out of the image or any depth in the window is missing."""
    uv, z = project(np.array([point_m]), obs.K, obs.T_world_cam)
    if not z[0] > 0 or not np.all(np.isfinite(uv)):
        return None
    u, v = int(uv[0, 0]), int(uv[0, 1])
    r = EMPTY_WINDOW_PX
    if not (r <= u < obs.width - r and r <= v < obs.height - r):
        return None
    window = obs.depth_m[v - r: v + r + 1, u - r: u + r + 1]
    valid = window[(window > 0) & np.isfinite(window)]
    return (float(valid.min()), float(z[0])) if valid.size == window.size else None


def sees_table_at(obs: Observation, xy_m: tuple[float, float], table_z: float) -> bool:
    """Whether the camera sees the table top at ``xy_m``: every pixel of a small window around that point shows
    depth no nearer than ``TABLE_SEEN_TOL_M`` before it (nothing stands there, nor in front of it: an arm
    over the spot, or a box between it and the camera, stops the ray sooner). False where the point is out of the
    image or depth is missing."""
    seen = _window_depth(obs, (xy_m[0], xy_m[1], table_z))
    return seen is not None and seen[0] > seen[1] - TABLE_SEEN_TOL_M


def _group_member(subtask: Subtask) -> bool:
    """Whether the subtask puts one of several alike objects somewhere (``binding.expand_groups``)."""
    return (subtask.obj.every and subtask.slot is not None and subtask.target is not None
            and subtask.relation in ("in", "on"))


def _count_check(subtask: Subtask, fresh: list[SceneObject], boxes: dict[str, Box],
                 table_z: float) -> list[PredicateResult] | None:
    """For the k-th of several alike objects put into (onto) one target: at least k of that kind are there now.
    Alike objects cannot be told apart by a fresh look; their number in the target can."""
    if subtask.target is None or subtask.target.key() not in boxes or subtask.slot is None:
        return None
    box = boxes[subtask.target.key()]
    kind = (canonical_label(subtask.obj.label), subtask.obj.color)
    alike = [o for o in fresh if (canonical_label(o.label), o.color if subtask.obj.color else kind[1]) == kind]
    rel = subtask.relation or "in"
    inside = [o.id for o in alike if relation_holds(rel, Box.of_scene(o), box, table_z)[0]]
    want = subtask.slot + 1
    holds = len(inside) >= want
    return [PredicateResult(predicate=f"{rel}({subtask.obj.label} x{want}, {subtask.target.key()})", holds=holds,
                            detail=f"{len(inside)} of the {len(alike)} {subtask.obj.label}s seen are {rel} "
                                   f"{box.name} ({', '.join(inside) or 'none'}); {want} should be")]


def align_ids(fresh: list[SceneObject], before: dict[str, SceneObject], subtask: Subtask,
              placed_at: tuple[float, float, float] | None) -> list[SceneObject]:
    """The fresh scan with its objects named as the localised ones they are: alike objects (three bottles, two
    cans) get their ids by position, the subtask's object by where it was put (``placed_at``), the others by where
    they were. A fresh object that matches none keeps its id unless another took it or it is a localised object's
    id (an alike object far from where that one can be is not it)."""
    names = aligned_names(fresh, before, subtask, placed_at)
    taken = set(names.values()) | set(before)
    out = []
    for i, o in enumerate(fresh):
        new_id = names.get(i) or (o.id if o.id not in taken else f"{o.id}_seen{i}")
        out.append(o if new_id == o.id else o.model_copy(update={"id": new_id}))
    return out


def _placed_xy(obj: SceneObject) -> tuple[float, float]:
    """The point a place puts at its target: the object's functional point 0 (its bottom centre; a pan's body,
    not its handle) where perception gives it, else its centre."""
    x, y, _ = _placed_xyz(obj)
    return (x, y)


def _finds(subtask: Subtask, fresh: list[SceneObject]) -> bool:
    """Whether the subtask's object resolves among ``fresh`` objects."""
    try:
        resolve(subtask.obj, candidates_of(fresh), allow_color_only=True)
    except ResolutionError:
        return False
    return True


def _moved(subtask: Subtask, before: dict[str, SceneObject], fresh: list[SceneObject]) -> bool:
    """Whether the subtask's object is now more than MOVED_MIN_M from where it was localised (or gone)."""
    try:
        old = before[resolve(subtask.obj, candidates_of(list(before.values())), allow_color_only=True).name]
        now = next(o for o in fresh if o.id == resolve(subtask.obj, candidates_of(fresh), allow_color_only=True).name)
    except (ResolutionError, KeyError, StopIteration):
        return True
    return math.dist(old.position_m, now.position_m) > MOVED_MIN_M


def _moved_only(report: ActorReport) -> bool:
    """Whether the attempt moved an arm but put nothing down (a push, a pull, a topple): it cannot have placed the
    subtask's object. A report without commands (a re-check of an earlier subtask) says nothing either way."""
    return bool(report.commands) and not any(c.skill == "place_actor" for c in report.commands)


def _pushed_only(report: ActorReport) -> bool:
    """Whether the attempt pushed, pulled or toppled the object with closed fingers and never took it: it may have
    shoved it onto a wide target (fries lying on their side pushed onto the tray), but did not put it there."""
    taking = ("grasp_actor", "place_actor", "upright_actor", "execute_ee_action")
    moves = [c for c in report.commands if c.skill != "back_to_origin"]  # an arm parked out of the way first
    return bool(moves) and moves[0].skill == "close_gripper" and not any(c.skill in taking for c in moves)


def _before_xyz(subtask: Subtask, before: dict[str, SceneObject],
                before_cands: list[Candidate]) -> tuple[float, float, float] | None:
    """Where the subtask's object was before its actions (its place point), if it was localised."""
    with contextlib.suppress(ResolutionError):
        obj = before[resolve(subtask.obj, before_cands, allow_color_only=True).name]
        return _placed_xyz(obj)
    return None


def _placed_xyz(obj: SceneObject) -> tuple[float, float, float]:
    """``_placed_xy`` with its height."""
    fp0 = obj.points.get("fp0")
    return (fp0[0], fp0[1], fp0[2]) if fp0 is not None else obj.position_m


def _ee_pose(chunk: list[float]) -> tuple[np.ndarray, tuple[float, float, float]]:
    """One arm's half of an end-effector action (xyz, quaternion wxyz, ...): its 4x4 pose and grasp centre."""
    T = np.eye(4)
    T[:3, :3] = Rotation.from_quat([chunk[4], chunk[5], chunk[6], chunk[3]]).as_matrix()
    T[:3, 3] = chunk[:3]
    tcp = T[:3, 3] + TCP_OFFSET_M * T[:3, 0]
    return T, (float(tcp[0]), float(tcp[1]), float(tcp[2]))


def _ee_release_xy(report: ActorReport, start_xyz: tuple[float, float, float] | None) -> tuple[float, float] | None:
    """Tier 3: where the object taken in this report's actions was let go (its point at ``start_xyz`` carried
    with the hand from the action that closed the fingers near it to the one that opened them); None without
    both. An object a hand held already when the attempt began (``ActorReport.start_arms``: fingers not open,
    grasp centre near it) is carried from that pose."""
    if start_xyz is None:
        return None
    grip = {0: 1.0, 1: 1.0}
    closed: dict[int, np.ndarray] = {}
    for arm, side in enumerate(("left", "right")):
        state = report.start_arms.get(side)
        if state is None or len(state) != 8 or state[7] >= HOLD_OPEN_MAX:
            continue
        T, tcp = _ee_pose(state)
        if math.dist(tcp, start_xyz) <= EE_TOOK_NEAR_M:
            closed[arm] = np.linalg.inv(T) @ np.array([*start_xyz, 1.0])
            grip[arm] = 0.0
    out: tuple[float, float] | None = None
    for c in report.commands:
        pose = c.args.get("target_pose")
        if c.skill != "execute_ee_action" or not c.ok or not isinstance(pose, list) or len(pose) != 16:
            continue
        for arm in (0, 1):
            chunk = [float(v) for v in pose[8 * arm: 8 * arm + 8]]
            T, tcp = _ee_pose(chunk)
            if chunk[7] < 0.5 <= grip[arm] and math.dist(tcp, start_xyz) <= EE_TOOK_NEAR_M:
                closed[arm] = np.linalg.inv(T) @ np.array([*start_xyz, 1.0])
            elif chunk[7] >= 0.5 > grip[arm] and arm in closed:
                p = T @ closed.pop(arm)
                out = (float(p[0]), float(p[1]))
            grip[arm] = chunk[7]
    return out


def _not_held(subtask: Subtask, held_state: dict[str, bool], ctx: AgentContext, box: Box | None) -> str | None:
    """Why an object the subtask is to leave in hand is not held (a slip put it down), or None. A lift leaves it
    held (by both hands when both were to lift it); so does a place that holds it there to receive something.
    A simulator attaches an object to one gripper at a time: the other hand then holds it if its gripper is not
    open and its hand is at the object."""
    if subtask.action != "lift" and not subtask.hold:
        return None
    holders = [arm for arm, held in held_state.items() if held]
    what = subtask.obj.phrase
    if not holders:
        return f"{what} is held by no gripper (it was to stay in hand)"
    if subtask.arm_hint != "both" or len(holders) == 2:
        return None
    other = "right" if holders[0] == "left" else "left"
    opening = ctx.gripper_opening(other) if ctx.gripper_opening is not None else None  # type: ignore[arg-type]
    if opening is not None and opening < HOLD_OPEN_MAX and _hand_near(ctx, other, box):
        return None
    return f"{what} is held by the {holders[0]} hand only (both were to hold it)"


def _holding(ctx: AgentContext, arm: str, box: Box | None) -> bool:
    """The gripper senses an object (or is neither open nor fully closed), and the object is near that hand."""
    if ctx.gripper_holding is not None:
        sensed = ctx.gripper_holding(arm)  # type: ignore[arg-type]
    elif ctx.gripper_opening is not None:
        sensed = HOLD_OPEN_MIN < ctx.gripper_opening(arm) < HOLD_OPEN_MAX  # type: ignore[arg-type]
    else:
        return False
    return sensed and _hand_near(ctx, arm, box)


def _hand_near(ctx: AgentContext, arm: str, box: Box | None) -> bool:
    """Whether ``arm``'s hand is within ``HOLD_DIST_M`` of the object seen in ``box`` (True when it is hidden in
    the hand, or the arm's pose is unknown)."""
    if box is None:
        return True  # hidden in the hand
    pose = ctx.skills.get_arm_pose(arm)  # type: ignore[arg-type]
    ee = pose.data.get("pose") if pose.ok else None
    if ee is None:
        return True
    return math.dist(tuple(float(v) for v in list(ee)[:3]), box.centre_m) < HOLD_DIST_M


def _nest_shown(subtask: Subtask, before: dict[str, SceneObject], fresh: list[SceneObject]) -> bool:
    """Whether ``fresh`` shows the subtask's object nested in its container as one with it."""
    if subtask.relation != "in" or subtask.target is None:
        return False
    return _nested(subtask, before, candidates_of(list(before.values())), fresh) is not None


def _nested(subtask: Subtask, before: dict[str, SceneObject], before_cands: list[Candidate],
            fresh: list[SceneObject]) -> SceneObject | None:
    """The moved object nested in the subtask's container, alike in size (``scene_memory.nest_seen``), or None."""
    assert subtask.target is not None
    try:
        moved = before[resolve(subtask.obj, before_cands, allow_color_only=True).name]
        container = before[resolve(subtask.target, before_cands, allow_color_only=True).name]
    except (ResolutionError, KeyError):
        return None
    return nest_seen(moved, container, fresh)


def _leaning_alike(subtask: Subtask, before: dict[str, SceneObject], fresh: list[SceneObject],
                   boxes: dict[str, Box]) -> str | None:
    """Why a nest of alike objects (a bowl put in a bowl) is not done although its check holds: an object alike to
    the moved one lies closer to the container than one object's width and either stands tilted (seen more than
    ``TILTED_HEIGHT_RATIO`` times as tall as one stood) or, being none of the localised ones, off the
    container's centre. Alike objects in a stack share one place, so the one matched to the moved object may be a
    lower one, while the moved one leans on the rim beside it (two alike bowls cannot stand that close on the
    table, nor does a bowl seated in another stand taller than two bowls)."""
    target_key = subtask.target.key() if subtask.target is not None else None
    moved = before.get(subtask.obj.instance or "")
    lower = before.get(subtask.target.instance or "") if subtask.target is not None else None
    if subtask.relation != "in" or target_key not in boxes or moved is None or lower is None:
        return None
    width = max(moved.size_m[0], moved.size_m[1])
    kind = (canonical_label(moved.label), moved.color)
    if not (as_wide(lower, width) or _kind(lower) == kind):  # a stack's lower members are seen in part
        return None  # not a nest of alike objects (a small object in a large container)
    container = boxes[target_key]
    # one object's height: the tallest alike one localised standing as it stands on the table (a stack's members
    # are seen in part; one seen taller than wide may lean already)
    localised = [o for o in (moved, lower, *before.values()) if _kind(o) == kind]
    upright = [o.size_m[2] for o in localised if o.size_m[2] <= max(o.size_m[0], o.size_m[1])]
    stood = max(upright or [o.size_m[2] for o in localised])
    for o in fresh:
        alike = _kind(o) == kind
        if not (alike or as_wide(o, width)):
            continue
        d = math.dist(o.position_m[:2], container.centre_m[:2])
        if d >= width:
            continue
        if o.size_m[2] > TILTED_HEIGHT_RATIO * stood:
            return (f"an object like {subtask.obj.phrase} stands tilted by {container.name}, {d * 100:.1f} cm off "
                    f"its middle ({o.size_m[2] * 100:.1f} cm tall; one stands {stood * 100:.1f} cm)")
        if o.id not in before and d > ON_XY_MAX_M and as_wide(o, width):
            return (f"an object like {subtask.obj.phrase} leans on {container.name}'s rim, {d * 100:.1f} cm off "
                    "its middle")
    return None


def _kind(o: SceneObject) -> tuple[str, str | None]:
    return (canonical_label(o.label), o.color)
