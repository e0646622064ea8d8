"""mplib motion planning for one arm of the dual-arm world.

Each arm has its own ``mplib.Planner`` on the embodiment's URDF/SRDF. Its planning world holds the table, the
pedestals, the wall, box obstacles for scene objects, the *other* arm (a second articulated model kept at that
arm's current joint positions and finger opening) and, while something is held, a box attached to the
end-effector; the arm's own fingers stand as last set (``set_fingers``). The planning world is kept in the
arm's base frame, with the mplib robot's base at the origin: mplib 0.2.1 places an attached box at the link's
pose relative to the base, so with a mounted base the held object would be checked far from where it is.
Free plans are timed through evenly spaced waypoints and checked again row by row (``touches``).
Planners: RRT-Connect (``plan_to_pose`` / ``plan_to_qpos``) for free moves, screw motion (``plan_straight``) for
straight-line approach and retreat. Poses are world-frame ``Pose`` values of the end-effector link.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import itertools
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import mplib
import numpy as np
import toppra
from mplib.collision_detection import fcl
from numpy.typing import NDArray

from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.robot_drivers.embodiment.loader import Embodiment
from mallvi.robot_drivers.motion.short_move import is_short, joint_line, turn_rad

log = logging.getLogger(__name__)

# mplib calls toppra.setup_logging on every successful plan, which adds one more console handler to toppra's
# logger each time; toppra's messages go through logging like any other library's instead.
toppra.setup_logging = lambda level="WARN": None
_LIBC = ctypes.CDLL(None)


@contextlib.contextmanager
def quiet_planner_output(stderr: bool = False) -> Iterator[None]:
    """Keep mplib and OMPL from writing to the terminal: Python prints and the C++ side's writes to fd 1 (and to
    fd 2 with ``stderr``, for calls known to warn there harmlessly)."""
    fds = (1, 2) if stderr else (1,)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = {fd: os.dup(fd) for fd in fds}
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in fds:
            os.dup2(devnull, fd)
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        _LIBC.fflush(None)  # what the C side buffered goes to /dev/null, not to the terminal later
        for fd, old in saved.items():
            os.dup2(old, fd)
            os.close(old)
        os.close(devnull)


PATH_DT_S = 0.02  # spacing of the time-parameterised waypoints
ALREADY_THERE_RAD = 1e-3  # a straight move to a pose this close in orientation (and 0.1 mm in position) is done
RRT_TIME_LIMIT_S = 2.0  # wall time per RRT-Connect attempt
RRT_ATTEMPTS = 3  # searches when the previous one timed out
START_CONTACT_RAD = 0.1  # a path may leave a contact it starts in within this joint travel
RRT_SEARCHES = 8  # searches in all, when the paths found touch an obstacle (each takes a few tens of ms)
IK_THRESHOLD = 1e-3  # mplib's IK success threshold (position error + quaternion error)
SHORT_STEP_RAD = 0.01  # largest joint change between waypoints of a short move (0.5 rad/s at PATH_DT_S)
SPLINE_OVERSHOOT_RAD = 0.05  # past a joint limit, at most this much is taken as spline overshoot and clipped
WAYPOINT_STEP_RAD = 0.05  # largest joint change between the waypoints given to time parameterisation


@dataclass(frozen=True)
class PlanResult:
    """A planned arm-joint path (N×dof, one row every ``dt_s`` seconds) or the reason there is none."""

    ok: bool
    message: str
    planner: str
    path_rad: NDArray[np.float64]
    dt_s: float = PATH_DT_S
    planning_s: float = 0.0
    no_ik: bool = False  # failed because the target has no inverse-kinematics solution

    @property
    def duration_s(self) -> float:
        return max(0, len(self.path_rad) - 1) * self.dt_s


def _mp_pose(pose: Pose) -> mplib.Pose:
    return mplib.Pose(np.asarray(pose.position_m, dtype=float), np.asarray(pose.quat_wxyz, dtype=float))


def densify(path_rad: NDArray[np.float64], max_step_rad: float) -> NDArray[np.float64]:
    """The same polyline in joint space with points inserted so no joint moves more than ``max_step_rad`` between
    rows. mplib fits one spline through the waypoints, uniformly in their index: through an RRT path's few
    waypoints it swings far off the straight segments that were collision-checked; through evenly spaced ones it
    keeps to them."""
    rows = [path_rad[:1]]
    for a, b in itertools.pairwise(path_rad):
        n = max(1, int(np.ceil(float(np.max(np.abs(b - a))) / max_step_rad)))
        rows.append(a + np.outer(np.arange(1, n + 1) / n, b - a))
    return np.vstack(rows)


def _even_topp(topp: Callable[..., tuple[object, ...]]) -> Callable[..., tuple[object, ...]]:
    """mplib's time parameterisation on evenly spaced waypoints (``densify``). Where toppra finds the dense path
    uncontrollable (a sharp corner), the given waypoints are parameterised as before; the timed path is checked for
    collisions afterwards either way (``ArmPlanner.touches``)."""

    def even(path: NDArray[np.float64], step: float = 0.1, verbose: bool = False) -> tuple[object, ...]:
        try:
            return topp(densify(path, WAYPOINT_STEP_RAD), step, verbose)
        except RuntimeError:
            return topp(path, step, verbose)

    return even


def clip_spline_overshoot(path_rad: NDArray[np.float64], q_start_rad: NDArray[np.float64],
                          limits_rad: NDArray[np.float64]) -> NDArray[np.float64]:
    """Clip the samples of a time-parameterised path that overshoot a joint limit by at most
    ``SPLINE_OVERSHOOT_RAD`` (the spline through in-limit waypoints bulges past it) to the limit, or to where the
    arm starts if it starts beyond it. A larger excursion is returned as it is, for the safety guard to refuse."""
    lo = np.minimum(limits_rad[:, 0], q_start_rad)
    hi = np.maximum(limits_rad[:, 1], q_start_rad)
    over = np.maximum(lo - path_rad, path_rad - hi)
    if np.any(over > 0) and float(over.max()) <= SPLINE_OVERSHOOT_RAD:
        return np.clip(path_rad, lo, hi)
    return path_rad


class ArmPlanner:
    """Plans end-effector and joint motions of one arm in a world that knows the table and the other arm."""

    def __init__(
        self,
        embodiment: Embodiment,
        side: ArmSide,
        base_pose: Pose,
        other_base_pose: Pose,
        static_boxes: Mapping[str, tuple[tuple[float, float, float], Pose]],
        joint_vel_limit_rad_s: float = 1.2,
        joint_acc_limit_rad_s2: float = 2.5,
    ) -> None:
        self.side = side
        self._emb = embodiment
        n = len(embodiment.arm_joints)
        with quiet_planner_output():
            self._planner = mplib.Planner(
                urdf=str(embodiment.urdf_path),
                srdf=str(embodiment.srdf_path),
                move_group=embodiment.ee_link,
                joint_vel_limits=np.full(n, joint_vel_limit_rad_s),
                joint_acc_limits=np.full(n, joint_acc_limit_rad_s2),
            )
        # world frame -> this arm's base frame; mplib's robot stays at the origin (see the module docstring)
        self._base_inv = _mp_pose(base_pose).inv()
        self._base = _mp_pose(base_pose)
        setattr(self._planner, "TOPP", _even_topp(self._planner.TOPP))  # noqa: B010 (mypy: assigning to a method)
        self._n_full = len(self._planner.user_joint_names)
        self._arm_idx = list(self._planner.move_group_joint_indices)
        self._finger_idx = [self._planner.user_joint_names.index(n) for n in embodiment.finger_joints]
        self._fingers_m = np.zeros(len(self._finger_idx))  # this arm's finger travel in the planning world
        other = mplib.ArticulatedModel(
            str(embodiment.urdf_path), str(embodiment.srdf_path), name=f"other_arm_of_{side}"
        )
        other.set_base_pose(self._base_inv * _mp_pose(other_base_pose))
        self._planner.planning_world.add_articulation(other, False)
        self._other = other
        for name, (size, pose) in static_boxes.items():
            self._planner.planning_world.add_object(self._box_in_base(name, size, pose))
        self._object_names: set[str] = set()
        self._attached: str | None = None  # the held object's box in the planning world
        self._start_contacts: list[str] = []  # what it may touch during the next motion (see attach_box)

    @property
    def joint_limits_rad(self) -> NDArray[np.float64]:
        """(dof × 2) lower/upper limits of the planned joints."""
        return np.asarray(self._planner.joint_limits[self._arm_idx], dtype=float)

    def _full(self, q_arm: NDArray[np.float64]) -> NDArray[np.float64]:
        q = np.zeros(self._n_full)
        q[self._arm_idx] = q_arm
        q[self._finger_idx] = self._fingers_m
        return q

    def set_fingers(self, fingers_m: NDArray[np.float64]) -> None:
        """This arm's finger travel (metres from closed, per finger joint) for every later plan and IK check:
        open fingers reach ``finger_travel_m`` further sideways than closed ones."""
        self._fingers_m = np.asarray(fingers_m, dtype=float).copy()

    def set_other_arm(self, q_other_arm: NDArray[np.float64],
                      fingers_m: NDArray[np.float64] | None = None) -> None:
        """Place the other arm's collision model at its current joint positions (fingers closed unless given)."""
        q = np.zeros(self._n_full)
        q[self._arm_idx] = q_other_arm
        if fingers_m is not None:
            q[self._finger_idx] = fingers_m
        self._other.set_qpos(q, True)

    def set_object_boxes(self, boxes: Mapping[str, tuple[tuple[float, float, float], Pose]]) -> None:
        """Replace the scene-object obstacles (name -> (box size, world pose))."""
        world = self._planner.planning_world
        for name in self._object_names:
            world.remove_object(name)
        for name, (size, pose) in boxes.items():
            world.add_object(self._box_in_base(name, size, pose))
        self._object_names = set(boxes)

    def _box_in_base(self, name: str, size_m: tuple[float, float, float], pose: Pose) -> fcl.FCLObject:
        """A box obstacle given in the world frame, placed in this planning world (the arm's base frame)."""
        shape = fcl.CollisionObject(fcl.Box(*[float(s) for s in size_m]))
        return fcl.FCLObject(name, self._base_inv * _mp_pose(pose), [shape], [mplib.Pose()])

    def attach_box(self, name: str, size_m: tuple[float, float, float], pose_in_ee: Pose,
                   q_arm: NDArray[np.float64]) -> None:
        """Treat a held object as a box moving with the end-effector (pose relative to the ee link), the arm at
        ``q_arm``. It may touch the hand and the fingers (the embodiment's ``hand_links`` and ``finger_links``)
        and, during the next motion, what it touches now (the table it is lifted from, a neighbour its box
        overlaps); everything else it must avoid."""
        self.detach()
        pl = self._planner
        world = pl.planning_world
        touch = [*self._emb.hand_links, *self._emb.finger_links]
        box = fcl.Box(*[float(s) for s in size_m])
        key = f"held:{name}"
        with quiet_planner_output():
            world.attach_object(key, box, pl.robot.get_name(), pl.move_group_link_id, _mp_pose(pose_in_ee), touch)
        self._attached = key
        self.in_collision(q_arm)  # places the arm and the box
        for c in world.check_collision():
            if key in (c.object_name1, c.object_name2):
                self._start_contacts.append(c.link_name2 if c.object_name1 == key else c.link_name1)
        if self._start_contacts:
            world.get_allowed_collision_matrix().set_entry(key, self._start_contacts, True)

    def detach(self) -> None:
        """Remove the held object's box from the planning world."""
        if self._attached is not None:
            world = self._planner.planning_world
            if self._start_contacts:
                world.get_allowed_collision_matrix().remove_entry(self._attached, self._start_contacts)
            with quiet_planner_output():
                world.detach_object(self._attached, also_remove=True)
            self._attached = None
            self._start_contacts = []

    def fk(self, q_arm: NDArray[np.float64]) -> Pose:
        """World pose of the end-effector link at joint positions ``q_arm``."""
        pm = self._planner.pinocchio_model
        pm.compute_forward_kinematics(self._full(q_arm))
        T_base_ee = pm.get_link_pose(self._planner.move_group_link_id).to_transformation_matrix()
        T = self._base.to_transformation_matrix() @ T_base_ee
        return Pose.from_matrix(T)

    def ik(
        self, pose: Pose, q_start: NDArray[np.float64], n_init: int = 40
    ) -> tuple[NDArray[np.float64] | None, str]:
        """Collision-free joint positions reaching ``pose`` (closest to ``q_start``), or None and the reason.

        ``n_init`` random restarts are tried (fewer is faster and may miss awkward solutions).
        """
        goal = self._base_inv * _mp_pose(pose)
        with quiet_planner_output():
            status, q = self._planner.IK(goal, self._full(q_start), return_closest=True, n_init_qpos=n_init)
        if status != "Success" or q is None:
            return None, f"no inverse-kinematics solution ({status})"
        # mplib takes a solution a little past a joint limit (its wrap tolerance); RRT-Connect's state space does
        # not, and timed out on every search towards a goal 2.5e-4 rad past one (place_burger_fries_ee, 780000)
        limits = self.joint_limits_rad
        return np.clip(np.asarray(q, dtype=float)[self._arm_idx], limits[:, 0], limits[:, 1]), "ok"

    def has_ik(self, pose: Pose, q_start: NDArray[np.float64], n_init: int = 40) -> bool:
        """Whether ``ik`` would find a solution: the same restarts and collision test, stopping at the first
        solution instead of collecting all of them to pick the closest (a reachability check, several times
        faster than ``ik`` when the pose is reachable)."""
        pl = self._planner
        goal = self._base_inv * _mp_pose(pose)
        link = pl.link_name_2_idx[pl.move_group]
        arm_idx = pl.move_group_joint_indices
        q = self._full(q_start)
        pl.robot.set_qpos(q, True)
        with quiet_planner_output():
            for _ in range(n_init):
                q_ik, converged, _ = pl.pinocchio_model.compute_IK_CLIK(link, goal, q, [])
                if converged and pl.wrap_joint_limit(q_ik):
                    pl.planning_world.set_qpos_all(q_ik[arm_idx])
                    if not pl.planning_world.check_collision():
                        pl.pinocchio_model.compute_forward_kinematics(q_ik)
                        if goal.distance(pl.pinocchio_model.get_link_pose(link)) < IK_THRESHOLD:
                            return True
                q = pl.pinocchio_model.get_random_configuration()
        return False

    def _result(self, planner: str, raw: Mapping[str, object], t0: float, q_start: NDArray[np.float64]) -> PlanResult:
        dt = time.perf_counter() - t0
        status = str(raw.get("status", "no status"))
        if status != "Success":
            return PlanResult(False, f"{planner} planning failed: {status}", planner, np.zeros((0, len(q_start))),
                              planning_s=dt)  # fmt: skip
        path = np.asarray(raw["position"], dtype=float)
        if path.ndim != 2 or len(path) == 0:
            path = q_start[None, :].copy()
        return PlanResult(True, "ok", planner, clip_spline_overshoot(path, q_start, self.joint_limits_rad),
                          PATH_DT_S, dt)

    def plan_to_qpos(self, q_goal: NDArray[np.float64], q_start: NDArray[np.float64],
                     searches: int = RRT_SEARCHES, free_start: bool = False) -> PlanResult:
        """RRT-Connect to a joint configuration (collision-checked), in up to ``searches`` searches. With
        ``free_start`` a start in collision fails at once (else the path may leave it, see ``touches``)."""
        t0 = time.perf_counter()
        if float(np.max(np.abs(q_goal - q_start))) < 1e-3:
            return PlanResult(True, "already there", "rrt_connect", q_start[None, :].copy(), PATH_DT_S, 0.0)
        if free_start and self.in_collision(q_start):
            return self._result("rrt_connect", {"status": "the start is in collision"}, t0, q_start)
        return self._result("rrt_connect", self._rrt_connect(q_goal, q_start, searches), t0, q_start)

    def plan_to_pose(self, pose: Pose, q_start: NDArray[np.float64], searches: int = RRT_SEARCHES,
                     free_start: bool = False) -> PlanResult:
        """RRT-Connect to an end-effector pose: IK (closest collision-free solution), then a joint-space plan in up
        to ``searches`` searches; ``free_start`` as in ``plan_to_qpos``."""
        t0 = time.perf_counter()
        if free_start and self.in_collision(q_start):
            return self._result("rrt_connect", {"status": "the start is in collision"}, t0, q_start)
        q_goal, why = self.ik(pose, q_start)
        if q_goal is None:
            empty = np.zeros((0, len(q_start)))
            return PlanResult(False, why, "rrt_connect", empty, planning_s=time.perf_counter() - t0, no_ik=True)
        if float(np.max(np.abs(q_goal - q_start))) < 1e-3:
            return PlanResult(True, "already there", "rrt_connect", q_start[None, :].copy(), PATH_DT_S,
                              time.perf_counter() - t0)  # fmt: skip
        return self._result("rrt_connect", self._rrt_connect(q_goal, q_start, searches), t0, q_start)

    def _rrt_connect(self, q_goal: NDArray[np.float64], q_start: NDArray[np.float64],
                     searches: int = RRT_SEARCHES) -> Mapping[str, object]:
        """RRT-Connect with a wall-time limit per search, in up to ``searches`` searches. A search that used its
        whole limit (a time-out, more frequent on a loaded machine) is tried again up to ``RRT_ATTEMPTS`` times
        in all, and so is a plan whose time-parameterised path touches an obstacle: RRT-Connect checks the long
        edges of its shortened path at a coarse resolution, which passes through thin obstacles (a mug rack's
        box). A failure before the limit (e.g. a start in collision) is final."""
        raw: Mapping[str, object] = {"status": "not planned"}
        timeouts = 0
        for _ in range(searches):
            t0 = time.perf_counter()
            raw = self._guarded_call(self._planner.plan_qpos, [self._full(q_goal)], self._full(q_start),
                                     time_step=PATH_DT_S, planning_time=RRT_TIME_LIMIT_S)  # fmt: skip
            if raw.get("status") == "Success":
                if not self.touches(np.asarray(raw["position"], dtype=float)):
                    return raw
                raw = {"status": "every path found touches an obstacle between the waypoints RRT-Connect checked"}
                continue
            timeouts += 1
            if time.perf_counter() - t0 < 0.9 * RRT_TIME_LIMIT_S or timeouts >= RRT_ATTEMPTS:
                break
        return raw

    def in_collision(self, q_arm: NDArray[np.float64]) -> bool:
        """Whether the arm (with its fingers as last set, and what it holds) collides at ``q_arm`` in the planning
        world."""
        self._planner.robot.set_qpos(self._full(q_arm), True)  # the fingers as last set
        self._planner.planning_world.set_qpos_all(np.asarray(q_arm, dtype=float))  # and what the arm holds with it
        return bool(self._planner.planning_world.is_state_colliding())

    def colliding_objects(self, q_arm: NDArray[np.float64]) -> set[str]:
        """The object boxes (``set_object_boxes``) the arm, its fingers or what it holds collides with at ``q_arm``."""
        if not self.in_collision(q_arm):  # also poses the robot and what it holds at q_arm
            return set()
        names: set[str] = set()
        for hit in self._planner.planning_world.check_collision():
            names.update(n for n in (hit.object_name1, hit.object_name2) if n in self._object_names)
        return names

    def touches(self, path_rad: NDArray[np.float64]) -> bool:
        """Whether the arm (or what it holds) is in collision at some row of ``path_rad`` in the planning world,
        after it has left the contact it may start in (a gripper that let go beside an object; RRT-Connect moves
        out of such a start): leading rows in collision within ``START_CONTACT_RAD`` of the start are allowed."""
        leaving = True
        for q in path_rad:
            colliding = self.in_collision(q)
            if leaving and colliding and float(np.max(np.abs(q - path_rad[0]))) <= START_CONTACT_RAD:
                continue
            leaving = False
            if colliding:
                return True
        return False

    def plan_straight(self, pose: Pose, q_start: NDArray[np.float64]) -> PlanResult:
        """Screw motion: the end-effector moves on a straight line (and a constant-axis rotation) to ``pose``."""
        t0 = time.perf_counter()
        now = self.fk(q_start)
        if np.linalg.norm(now.p - pose.p) < 1e-4 and turn_rad(now, pose) < ALREADY_THERE_RAD:
            return PlanResult(True, "already there", "screw", q_start[None, :].copy(), PATH_DT_S, 0.0)
        raw = self._guarded_call(
            self._planner.plan_screw, self._base_inv * _mp_pose(pose), self._full(q_start), time_step=PATH_DT_S,
            qpos_step=0.05, wrt_world=False,
        )
        result = self._result("screw", raw, t0, q_start)
        if result.ok or not is_short(now, pose):
            return result
        short = self._short_straight(pose, q_start, now)
        if short is None:
            return result
        return PlanResult(True, "ok (short move by joint interpolation)", "screw", short, PATH_DT_S,
                          time.perf_counter() - t0)  # fmt: skip

    def _short_straight(self, pose: Pose, q_start: NDArray[np.float64], now: Pose) -> NDArray[np.float64] | None:
        """A short straight move whose screw plan stalled, by joint interpolation to the nearest IK solution
        (``short_move``), checked in the screw planner's world (arms, no scene objects)."""
        q_goal, _ = self.ik(pose, q_start)
        if q_goal is None:
            return None
        world = self._planner.planning_world

        def collides(q: NDArray[np.float64]) -> bool:
            world.set_qpos_all(q)
            return bool(world.is_state_colliding())

        return joint_line(q_start, q_goal, now, pose, self.fk, collides, SHORT_STEP_RAD)

    @staticmethod
    def _guarded_call(fn: Callable[..., Mapping[str, object]], *args: object, **kwargs: object) -> Mapping[str, object]:
        """Call an mplib planner silently; its RuntimeErrors (e.g. "Fail to parameterize path" from time
        parameterisation) become a failed status instead of escaping the skill."""
        try:
            with quiet_planner_output():
                return fn(*args, **kwargs)
        except RuntimeError as e:
            return {"status": f"planner error: {e}"}
