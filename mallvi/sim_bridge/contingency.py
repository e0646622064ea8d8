"""Fault injection for the simulated skills (DualTHOR-style contingencies), driven by a ``ContingencyProfile``.

Each grasp and each place draws one fault (or none) from the episode's generator ``fault_rng(scene, seed, level)``,
so an episode's faults are reproducible. The faults act physically on the SAPIEN scene:

- ``grasp_miss``: just before the fingers close, the object is pushed out from between them; the fingers close
  on nothing and ``grasp_actor`` reports the failure, as a real gripper would. An object the other hand holds
  (a mid-air hand-over) stays in that hand: the reaching hand falls short of it instead.
- ``grasp_slip``: after a verified grasp and lift the object slips out and falls; the skill still says success.
- ``place_off``: the object is put down 4–8 cm from the asked target (random direction); success is reported.
- ``knock_over``: after the place the object is knocked onto its side (one wide and low, a bowl or a burger, is
  pushed 4–8 cm aside instead); success is reported.

Every injected fault is appended to ``FaultInjector.log`` (kind, skill, object, simulated time) and passed, as it
happens, to each callable in ``FaultInjector.listeners`` (e.g. one that writes a ``fault_injected`` trace event).

The skills know nothing of faults: ``SimFaults`` plugs an episode's ``FaultInjector`` into them through the four
``FaultHooks`` points (fingers about to close, object lifted, place starting, object put down), and Tier 3's
end-effector actions through two more: fingers closed on an object (a miss acts then, a slip at the next lift)
and an object let go (a place's fault: ``place_off`` moves it where it came down, ``knock_over`` tips it).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sapien
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.sim_bridge import layout
from mallvi.sim_bridge.contingency_profile import ContingencyProfile, draw_fault, fault_rng, parse_contingency
from mallvi.sim_bridge.motion import Motion
from mallvi.sim_bridge.scene_spec import CUBE_TOL_M, SimObject
from mallvi.sim_bridge.skill_ports import Clock, Objects, Rig

log = logging.getLogger(__name__)

#: after a place fault the scene runs until it is at rest, at most this long (an object put down on a bowl's rim
#: slides for a while): what the agent then sees is where it stays
FAULT_SETTLE_S = 3.0
SLIP_CLEAR_M = 0.01  # after a slip the fingertips end at least this far above the dropped object
GRIPPER_HALF_WIDTH_M = 0.03  # a miss pushes the object this far past the grasp centre, plus 2 cm
FALL_SHORT_CLEAR_M = 0.01  # a hand-over miss: the reaching fingertips end this far short of the object...
FALL_SHORT_MAX_M = 0.12  # ...the hand backing off at most this far
TIP_CLEAR_M = 0.01  # a knock tips an object only towards a side with this much room beyond where it would lie


@dataclass
class FaultInjector:
    """Draws faults per skill call and applies them to objects."""

    profile: ContingencyProfile
    rng: np.random.Generator
    log: list[dict[str, Any]] = field(default_factory=list)
    listeners: list[Callable[[dict[str, Any]], None]] = field(default_factory=list)

    @staticmethod
    def for_episode(level: str | ContingencyProfile, scene: str, seed: int) -> FaultInjector | None:
        """The injector of one episode, or None when the level injects nothing (ContingencySpecError if invalid)."""
        profile = parse_contingency(level) if isinstance(level, str) else level
        if not profile.injects_faults:
            return None
        return FaultInjector(profile, fault_rng(scene, seed, profile.name))

    def draw(self, skill: str) -> str | None:
        """The fault this call of ``skill`` ("grasp" or "place") suffers, or None."""
        return draw_fault(self.rng, self.profile, skill)

    def record(self, kind: str, skill: str, obj: str, sim_time_s: float) -> None:
        entry = {"kind": kind, "skill": skill, "object": obj, "sim_time_s": round(sim_time_s, 3)}
        self.log.append(entry)
        log.info("injected %s during %s of %s", kind, skill, obj)
        for listener in self.listeners:
            try:
                listener(dict(entry))
            except Exception as e:  # a broken listener must not change the episode
                log.warning("fault listener failed: %s", e)

    def place_offset_m(self) -> NDArray[np.float64]:
        """A horizontal offset of 4–8 cm in a random direction (place_off)."""
        r = float(self.rng.uniform(0.04, 0.08))
        a = float(self.rng.uniform(0.0, 2 * math.pi))
        return np.array([r * math.cos(a), r * math.sin(a), 0.0])


class SimFaults:
    """``FaultHooks`` that apply an episode's ``FaultInjector`` to the simulated skills."""

    def __init__(self, injector: FaultInjector, rig: Rig, objects: Objects, motion: Motion, clock: Clock) -> None:
        self.injector = injector
        self.rig = rig
        self.objects = objects
        self.motion = motion
        self.clock = clock

    def grasp_closing(self, side: ArmSide, actor: str) -> str | None:
        """Draw the grasp's fault; a ``grasp_miss`` pushes the object out from between the fingers now. An object
        the other hand holds (a mid-air hand-over) cannot be pushed out of that hand: the reaching hand falls
        short instead, backing off along its approach until its fingertips are clear of the object."""
        fault = self.injector.draw("grasp")
        if fault == "grasp_miss" and self.rig.holder.holder_of(actor) not in (None, side):
            if not self._fall_short(side, actor):
                log.info("no room for the %s hand to fall short of %s: the miss is not injected", side, actor)
                return None
            self.injector.record(fault, "grasp", actor, self.clock.sim_time_s)
        elif fault == "grasp_miss":
            arm = self.rig.arms[side]
            T_ee = arm.ee_pose().as_matrix()
            sideways = T_ee[:3, 2] if abs(T_ee[2, 2]) < 0.7 else T_ee[:3, 0]
            push_out_of_grasp(self.objects.bodies[actor], sideways, GRIPPER_HALF_WIDTH_M,
                              grasp_centre_world=np.asarray(arm.tcp_pose().position_m, dtype=float))
            self.injector.record(fault, "grasp", actor, self.clock.sim_time_s)
        return fault

    def _fall_short(self, side: ArmSide, actor: str) -> bool:
        """Back the ``side`` hand off along its approach until its fingertips are ``FALL_SHORT_CLEAR_M`` short of
        the part of ``actor`` nearest the hand (its box, at most ``FALL_SHORT_MAX_M`` in all); False where it
        cannot move so."""
        arm = self.rig.arms[side]
        ee = arm.ee_pose()
        approach = ee.as_matrix()[:3, 0]
        tcp = np.asarray(arm.tcp_pose().position_m, dtype=float)
        near_m = float(np.max((tcp - self.objects.bodies[actor].corners_world()) @ approach))
        back_m = min(self.rig.embodiment.tcp_to_fingertip_m + max(0.0, near_m) + FALL_SHORT_CLEAR_M, FALL_SHORT_MAX_M)
        p = np.asarray(ee.position_m, dtype=float) - back_m * approach
        return self.motion.move(side, Pose((float(p[0]), float(p[1]), float(p[2])), ee.quat_wxyz), "straight") is None

    def grasp_lifted(self, side: ArmSide, actor: str, fault: str | None, gripper_pos: float) -> None:
        """Apply a drawn ``grasp_slip``: the object drops out of the lifted gripper, whose command stays closed.

        A tall object held near its top lands with its top still between the fingers; the hand then rises clear
        of it first (as if it had kept lifting while the object slid out), so the fingers do not catch it again.
        """
        if fault != "grasp_slip":
            return
        rig = self.rig
        arm = rig.arms[side]
        rig.holder.release(side)
        arm.set_gripper(1.0)  # the fingers let go and the object falls out...
        self.clock.step(60)
        T_tcp = arm.tcp_pose().as_matrix()
        fingertips_z = float((T_tcp[:3, 3] + rig.embodiment.tcp_to_fingertip_m * T_tcp[:3, 0])[2])
        caught_m = float(self.objects.bodies[actor].corners_world()[:, 2].max()) - fingertips_z
        if caught_m > -SLIP_CLEAR_M:
            ee = arm.ee_pose()
            up = Pose((ee.position_m[0], ee.position_m[1], ee.position_m[2] + caught_m + SLIP_CLEAR_M), ee.quat_wxyz)
            why = self.motion.move(side, up, "straight_then_free")
            if why is not None:
                log.info("the %s hand could not rise clear of %s after its slip: %s", side, actor, why)
        arm.set_gripper(gripper_pos)  # ...while the gripper's command stays "closed"
        self.injector.record("grasp_slip", "grasp", actor, self.clock.sim_time_s)

    def place_drawn(self, actor: str) -> tuple[str | None, NDArray[np.float64]]:
        """The place's fault and the offset its target gets: 4-8 cm for a ``place_off``. It is recorded when the
        arm has carried the object there (``carried_off``): a place that then finds no inverse-kinematics solution
        or path moved nothing, and no fault acted."""
        fault = self.injector.draw("place")
        offset_m = np.zeros(3)
        if fault == "place_off":
            offset_m = self.injector.place_offset_m()
        return fault, offset_m

    def carried_off(self, actor: str, fault: str | None) -> None:
        """The arm has brought ``actor`` down at its target: a drawn ``place_off`` has acted (recorded now)."""
        if fault == "place_off":
            self.injector.record(fault, "place", actor, self.clock.sim_time_s)

    def closed_on(self, side: ArmSide, actor: str) -> str | None:
        """Tier 3: the fingers closed on ``actor``. A ``grasp_miss`` lets go of it and pushes it out from between
        them (the fingers end closed on nothing); where there is no room for the whole push, which would leave it
        caught between the closed fingers, the miss is not injected. A ``grasp_slip`` is returned for the next
        lift."""
        fault = self.injector.draw("grasp")
        if fault == "grasp_miss":
            arm = self.rig.arms[side]
            T_ee = arm.ee_pose().as_matrix()
            sideways = T_ee[:3, 2] if abs(T_ee[2, 2]) < 0.7 else T_ee[:3, 0]
            obj, tcp = self.objects.bodies[actor], np.asarray(arm.tcp_pose().position_m, dtype=float)
            step, fits = push_out_step(obj, sideways, GRIPPER_HALF_WIDTH_M, tcp)
            if not fits:
                # cut short, the push would leave the object between the closed fingers, held by nothing
                log.info("no room to push %s out of the %s fingers: the miss is not injected", actor, side)
                return None
            self.rig.holder.release(side)
            _shift_still(obj, step)
            self.injector.record(fault, "grasp", actor, self.clock.sim_time_s)
            self.clock.settle(0.5)
        return fault

    def let_go_off(self, actor: str, offset_m: NDArray[np.float64]) -> None:
        """Tier 3: ``actor`` was let go; a ``place_off`` moves it by ``offset_m`` (where it came down, plus the
        offset; it then settles under physics)."""
        if not np.any(offset_m):
            return
        self.injector.record("place_off", "place", actor, self.clock.sim_time_s)
        obj = self.objects.bodies[actor]
        pose = obj.entity.get_pose()
        _set_still(obj, sapien.Pose(p=np.asarray(pose.p, dtype=float) + offset_m + (0.0, 0.0, 0.005), q=pose.q))
        self.clock.settle(FAULT_SETTLE_S)

    def placed(self, actor: str, fault: str | None) -> None:
        """Apply a drawn ``knock_over`` once the object is put down and the hand has retreated (an object too wide
        and low to tip is slid 4-8 cm aside instead, short of what is in its way)."""
        if fault == "knock_over":
            obj = self.objects.bodies[actor]
            if not knock_over(obj, self.injector.rng):
                slide_aside(obj, self.injector.place_offset_m())  # too wide and low to tip: pushed aside
            self.injector.record(fault, "place", actor, self.clock.sim_time_s)
            self.clock.settle(FAULT_SETTLE_S)


def _body(obj: SimObject) -> sapien.physx.PhysxRigidDynamicComponent | None:
    return obj.entity.find_component_by_type(sapien.physx.PhysxRigidDynamicComponent)


def _set_still(obj: SimObject, pose: sapien.Pose) -> None:
    """Put ``obj`` at ``pose`` at rest (a fault moves it; it does not fling it)."""
    obj.entity.set_pose(pose)
    body = _body(obj)
    if body is not None:
        body.set_linear_velocity([0.0, 0.0, 0.0])
        body.set_angular_velocity([0.0, 0.0, 0.0])


def push_out_of_grasp(obj: SimObject, sideways_world: NDArray[np.float64], gripper_half_width_m: float,
                      grasp_centre_world: NDArray[np.float64] | None = None) -> bool:
    """Move ``obj`` along ``sideways_world`` (horizontal, perpendicular to the finger opening) out of the gripper;
    True when the whole push fitted (the object is clear of the fingers), False when it was cut short.

    The push is long enough for the part of the object behind the grasp centre (``grasp_centre_world``, default
    its own centre) to pass the gripper: half a width for an object grasped in the middle, more for a bar lying
    across the fingers and grasped near one end. It stops short of whatever it would run into (rays at two
    heights: neighbours, the arms, their pedestals) and keeps the object's whole footprint over the table, so
    the object is never put inside something or pushed off the table (off a stack, it falls onto the table).
    Of the two senses it takes the one with the longer free run among those with room for the whole push, else
    the one with more room.
    """
    step, fits = push_out_step(obj, sideways_world, gripper_half_width_m, grasp_centre_world)
    _shift_still(obj, step)
    return fits


def _shift_still(obj: SimObject, step_m: NDArray[np.float64]) -> None:
    """Move ``obj`` by ``step_m`` (world), at rest."""
    pose = obj.entity.get_pose()
    _set_still(obj, sapien.Pose(p=np.asarray(pose.p, dtype=float) + step_m, q=pose.q))


def push_out_step(obj: SimObject, sideways_world: NDArray[np.float64], gripper_half_width_m: float,
                  grasp_centre_world: NDArray[np.float64] | None = None) -> tuple[NDArray[np.float64], bool]:
    """The move ``push_out_of_grasp`` would give ``obj`` (world, metres) and whether all of it fits."""
    d = np.asarray(sideways_world, dtype=float)
    d[2] = 0.0
    d /= max(1e-9, float(np.linalg.norm(d)))
    pose = obj.entity.get_pose()
    corners = obj.corners_world()
    centre = np.asarray((pose * obj.box_center_local()).p, dtype=float)
    grasp = centre if grasp_centre_world is None else np.asarray(grasp_centre_world, dtype=float)
    need: dict[float, float] = {}
    room: dict[float, float] = {}
    free: dict[float, float] = {}
    for sense in (1.0, -1.0):
        u = sense * d
        behind = float(np.max((grasp - corners)[:, :2] @ u[:2]))  # the object's reach behind the grasp centre
        need[sense] = behind + gripper_half_width_m + 0.02
        free[sense], room[sense] = _room_m(obj, u)
    fitting = [sense for sense in (1.0, -1.0) if room[sense] >= need[sense]]
    # where the whole push fits, the sense with the longer free run (ties keep +d); else the one with more room
    sense = max(fitting, key=lambda k: free[k]) if fitting else max(room, key=lambda k: room[k])
    shift = min(need[sense], max(0.0, room[sense]))
    return shift * sense * d, bool(fitting)


def _room_m(obj: SimObject, u: NDArray[np.float64]) -> tuple[float, float]:
    """Along horizontal unit ``u``: the free run of the object's centre line (``_free_run_m``) and the room to move
    it, short of the first thing in the way and of the table's edge (5 mm kept)."""
    pose = obj.entity.get_pose()
    corners = obj.corners_world()
    centre = np.asarray((pose * obj.box_center_local()).p, dtype=float)
    ahead = float(np.max((corners - centre)[:, :2] @ u[:2]))  # the object's reach in front of its centre
    free = _free_run_m(obj, u)
    return free, min(free - ahead, _table_run_m(corners, u)) - 0.005


def slide_aside(obj: SimObject, offset_m: NDArray[np.float64]) -> float:
    """Push ``obj`` horizontally by ``offset_m``, as a knock slides an object too wide and low to tip, stopping
    short of what it would run into and of the table's edge (a bowl nested in another hardly moves); returns the
    distance moved (m)."""
    d = np.array([float(offset_m[0]), float(offset_m[1]), 0.0])
    dist = float(np.linalg.norm(d))
    if dist < 1e-9:
        return 0.0
    d /= dist
    shift = min(dist, max(0.0, _room_m(obj, d)[1]))
    pose = obj.entity.get_pose()
    _set_still(obj, sapien.Pose(p=np.asarray(pose.p, dtype=float) + shift * d, q=pose.q))
    return shift


def _cpu_system(obj: SimObject) -> sapien.physx.PhysxCpuSystem | None:
    scene = obj.entity.scene
    system = scene.physx_system if scene is not None else None
    return system if isinstance(system, sapien.physx.PhysxCpuSystem) else None


SWEEP_SIDE_RATIO = 0.9  # the side rays of a free run: this share of the object's half-width off its centre line


def _free_run_m(obj: SimObject, d: NDArray[np.float64], max_m: float = 1.0) -> float:
    """How far the object can travel along horizontal ``d`` before the nearest thing in the way: rays along its
    centre line and along both sides of its footprint (``SWEEP_SIDE_RATIO`` of its half-width off the centre), at
    1 cm above its bottom, at mid-height and 1 cm below its top (a bowl is widest at its rim). ``max_m`` when
    nothing is hit or without a CPU physics system.

    Rays along the centre line alone missed a neighbour a few centimetres aside: a bowl pushed out of the
    gripper went 15 cm into a nest of two bowls beside its path, and the overlap threw them off the table.
    """
    system = _cpu_system(obj)
    if system is None:
        return max_m
    pose = obj.entity.get_pose()
    corners = obj.corners_world()
    centre = np.asarray((pose * obj.box_center_local()).p, dtype=float)
    side = np.array([-d[1], d[0], 0.0]) / max(1e-9, float(np.linalg.norm(d[:2])))
    half_width = float(np.max(np.abs((corners - centre) @ side)))
    bottom_z, top_z = float(corners[:, 2].min()), float(corners[:, 2].max())
    heights = sorted({bottom_z + 0.01, float(centre[2]), max(bottom_z + 0.01, top_z - 0.01)})
    obj.entity.set_pose(sapien.Pose(p=[pose.p[0], pose.p[1], pose.p[2] + 100.0], q=pose.q))
    run = max_m
    try:
        for z in heights:
            for off in (0.0, SWEEP_SIDE_RATIO * half_width, -SWEEP_SIDE_RATIO * half_width):
                start = np.array([centre[0] + off * side[0], centre[1] + off * side[1], z], dtype=np.float32)
                hit = system.raycast(start, np.asarray(d, dtype=np.float32), max_m)
                if hit is not None:
                    run = min(run, float(hit.distance))
    finally:
        obj.entity.set_pose(pose)
    return run


def _table_run_m(corners: NDArray[np.float64], u: NDArray[np.float64]) -> float:
    """How far an object with these box corners can move along horizontal ``u`` before any corner leaves the
    table top (an object pushed off a stack lands on the table; one pushed off the table would be lost)."""
    half = np.array(layout.TABLE_SIZE_M[:2]) / 2
    lo = np.asarray(layout.TABLE_CENTER_XY_M, dtype=float) - half
    hi = np.asarray(layout.TABLE_CENTER_XY_M, dtype=float) + half
    run = math.inf
    for i in (0, 1):
        if u[i] > 1e-9:
            run = min(run, float(np.min((hi[i] - corners[:, i]) / u[i])))
        elif u[i] < -1e-9:
            run = min(run, float(np.min((lo[i] - corners[:, i]) / u[i])))
    return max(0.0, run)


TIP_MAX_WIDTH_RATIO = 1.5  # a knock tips an object over a face with at most this many times its height behind it


def knock_over(obj: SimObject, rng: np.random.Generator) -> bool:
    """Tip ``obj`` 90° over one of its bottom edges (chosen at random among those with room to fall to), as a push
    against a side face would; False, leaving it as it is, for an object too wide and low to tip over any, or
    with a wall or a neighbour close on every side it could fall to (``SimFaults.placed`` slides it then).

    The side faces are the faces of the object's box that stand upright in the world; it tips over one only with
    at most ``TIP_MAX_WIDTH_RATIO`` times its height to pivot across (a push slides a wider, lower object: a
    bowl, a burger, a box lying on its widest face; an object lying down rolls over its long edges only). The
    object pivots about that bottom edge, so its centre moves by about half its width plus half its height: a
    block knocked over on a stack hangs over the support's edge and falls off when the scene settles; on the
    table it ends up lying a few centimetres from where it was put. A cube tipped over an edge is, body for body,
    the same solid in the same place as the cube rotated by one of its symmetries, so it keeps its frame; any
    other shape keeps the tipped frame.
    """
    pose = obj.entity.get_pose()
    R_old = Rotation.from_quat([pose.q[1], pose.q[2], pose.q[3], pose.q[0]])
    size = np.asarray(obj.size_m, dtype=float)
    axes = [(i, sign) for sign in (1.0, -1.0) for i in (0, 1)] + [(2, 1.0), (2, -1.0)]  # +x, +y, -x, -y, +z, -z
    up_axis = int(np.argmax(np.abs(R_old.as_matrix()[2, :])))
    # The upright faces it can tip over: those with at most TIP_MAX_WIDTH_RATIO times its height behind them (a
    # push along a lying bar slides it rather than stand it on end; a bowl or a burger, wide and low, slides too,
    # instead of being stood on its rim to roll away like a wheel).
    side_faces = [R_old.apply(sign * np.eye(3)[i]) for i, sign in axes
                  if i != up_axis and size[i] <= TIP_MAX_WIDTH_RATIO * size[up_axis]]
    if not side_faces:  # a flat box lying on its widest face, a bowl standing: a push slides it
        return False
    first = int(rng.integers(0, len(side_faces)))
    d = next((u for u in (_horizontal(f) for f in side_faces[first:] + side_faces[:first])
              if _tip_room(obj, u, float(size[up_axis]))), None)
    if d is None:  # a wall or a neighbour close on every side it could fall to (a bottle in a bin): it stays up
        return False
    centre_local = np.asarray(obj.box_center_local().p)
    corners = obj.corners_world()
    reach = float(max(corners[:, :2] @ d[:2]))
    p_xy = np.asarray(pose.p[:2], dtype=float)
    pivot = np.array([*(p_xy + (reach - float(p_xy @ d[:2])) * d[:2]), float(min(corners[:, 2]))])
    R_tip = Rotation.from_rotvec(np.cross([0.0, 0.0, 1.0], d) * math.pi / 2)
    centre = np.asarray(pose.p) + R_old.apply(centre_local)
    centre_new = pivot + R_tip.apply(centre - pivot)
    cube = float(np.ptp(np.asarray(obj.size_m, dtype=float))) < CUBE_TOL_M
    R_new = R_old if cube else R_tip * R_old
    drop_m = _drop_below(obj, centre_new, float(pivot[2]))
    if drop_m > 0.0:  # nothing under its centre: it slides off the support's edge and lands on the surface below
        centre_new = centre_new + np.array([*(0.005 * d[:2]), -drop_m])
    p_new = centre_new - R_new.apply(centre_local)
    p_new[2] += 0.003  # clear of the surface it tipped onto
    x, y, z, w = R_new.as_quat()
    _set_still(obj, sapien.Pose(p=p_new, q=[w, x, y, z]))
    return True


def _horizontal(v: NDArray[np.float64]) -> NDArray[np.float64]:
    d = np.array(v, dtype=float)
    d[2] = 0.0
    return d / float(np.linalg.norm(d))


def _tip_room(obj: SimObject, d: NDArray[np.float64], height_m: float) -> bool:
    """Whether ``obj`` has room to fall over towards horizontal ``d``: lying, it reaches from its bottom edge on
    that side one height further (plus ``TIP_CLEAR_M``), and nothing may stand there (a bottle tipped over inside
    a bin met its wall and the bottles beside it, and the overlap flung it metres away)."""
    corners = obj.corners_world()
    centre = np.asarray((obj.entity.get_pose() * obj.box_center_local()).p, dtype=float)
    need_m = float(np.max((corners - centre)[:, :2] @ d[:2])) + height_m + TIP_CLEAR_M
    return _free_run_m(obj, d, max_m=need_m + 0.01) >= need_m


DROP_PROBE_ABOVE_M = 0.05


def _drop_below(obj: SimObject, centre_world: NDArray[np.float64], bottom_z: float) -> float:
    """How far the surface under ``centre_world`` lies below ``bottom_z`` (0 when it is within 1 cm or unknown).

    The probe starts ``DROP_PROBE_ABOVE_M`` above ``bottom_z`` (a ray starting inside the support would miss it)
    with the object itself moved out of the way, so only what lies under the new position counts.
    """
    system = _cpu_system(obj)
    if system is None:
        return 0.0
    pose = obj.entity.get_pose()
    obj.entity.set_pose(sapien.Pose(p=[pose.p[0], pose.p[1], pose.p[2] + 100.0], q=pose.q))
    try:
        start_z = bottom_z + DROP_PROBE_ABOVE_M
        start = np.array([centre_world[0], centre_world[1], start_z], dtype=np.float32)
        hit = system.raycast(start, np.array([0.0, 0.0, -1.0], dtype=np.float32), 3.0)
    finally:
        obj.entity.set_pose(pose)
    if hit is None:
        return 0.0
    drop = bottom_z - (start_z - float(hit.distance))
    return drop if drop >= 0.01 else 0.0
