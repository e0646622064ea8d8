"""Free moves among the objects are planned with the gripper as wide as it is and executed on the path that was
checked. Before, the planner had the fingers closed while they stood 4 cm further out each side, and fitted one
spline through an RRT path's few waypoints, which swung off the checked segments: an arm on its way home knocked
over standing bottles its plan had avoided (put_bottles_dustbin, development seeds 740006 and 740046)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import mplib
import numpy as np
import pytest
import sapien

from mallvi.contracts.geometry import Pose
from mallvi.contracts.skills import Failure
from mallvi.sim_bridge.motion import FREE_MOVE_MARGIN_M, NARROW_MARGIN_M
from mallvi.sim_bridge.planning import WAYPOINT_STEP_RAD, PlanResult, densify
from mallvi.sim_bridge.world import SimWorld
from tests.integration.test_sim_skill_arguments import two_cubes_world

CUBE_M = 0.01


@pytest.fixture(scope="module")
def world() -> Iterator[SimWorld]:
    yield from two_cubes_world()


def _beside_the_open_fingers(world: SimWorld) -> dict[str, tuple[tuple[float, float, float], Pose]]:
    """Two 1 cm cubes where the left arm's open fingers stand and closed ones do not: 0.045 m either side of the
    grasp axis (closed fingers end 0.012 m out, open ones span 0.040-0.052 m), 0.10 m along the approach."""
    T = world.arms["left"].ee_pose().as_matrix()
    cubes = {}
    for i, side in enumerate((1.0, -1.0)):
        p = T[:3, 3] + 0.10 * T[:3, 0] + side * 0.045 * T[:3, 1]
        cubes[f"cube{i}"] = ((CUBE_M, CUBE_M, CUBE_M), Pose.from_arrays(p, Pose.from_matrix(T).quat_wxyz))
    return cubes


def test_the_planner_has_the_fingers_as_open_as_they_are(world: SimWorld) -> None:
    motion, planner = world.skills.motion, world.planners["left"]
    q = world.arms["left"].joint_positions_rad()
    assert world.arms["left"].gripper_opening() == pytest.approx(1.0)
    motion.sync_planner("left", with_objects=False)
    np.testing.assert_allclose(motion.fingers_m("left"), [0.04, 0.04], atol=2e-3)
    planner.set_object_boxes(_beside_the_open_fingers(world))
    try:
        assert planner.in_collision(q)  # the open fingers stand in the cubes
        planner.set_fingers(np.zeros(2))
        assert not planner.in_collision(q)  # closed fingers (the old model) would not
    finally:
        motion.sync_planner("left", with_objects=True)


def test_a_gripper_about_to_open_is_planned_open(world: SimWorld) -> None:
    arm = world.arms["left"]
    arm.set_gripper(0.0)
    try:
        motion = world.skills.motion
        assert float(np.max(motion.fingers_m("left"))) < 0.005
        np.testing.assert_allclose(motion.fingers_m("left", opening=1.0), [0.04, 0.04], atol=1e-9)
    finally:
        arm.set_gripper(1.0)


def _off_polyline_rad(rows: np.ndarray, polyline: np.ndarray) -> float:
    """The largest joint-space distance of ``rows`` from the polyline through ``polyline``'s rows."""
    worst = 0.0
    for q in rows:
        best = np.inf
        for a, b in itertools.pairwise(polyline):
            t = float(np.clip(np.dot(q - a, b - a) / np.dot(b - a, b - a), 0.0, 1.0))
            best = min(best, float(np.linalg.norm(q - (a + t * (b - a)))))
        worst = max(worst, best)
    return worst


def test_the_timed_path_keeps_to_the_checked_segments(world: SimWorld) -> None:
    """Three waypoints, one long and one short segment with a corner between, as RRT-Connect returns them."""
    waypoints = np.array([[0.0, 1.4, -0.5, 0.0, 0.7, 0.0],
                          [0.9, 2.0, -1.2, 0.3, 0.2, 0.4],
                          [1.0, 2.1, -1.0, 0.3, 0.3, 0.4]])  # fmt: skip
    planner = world.planners["left"]._planner
    raw = mplib.Planner.TOPP(planner, waypoints, 0.02)[1]  # mplib's own: one spline through the waypoints
    ours = planner.TOPP(waypoints, 0.02)[1]
    assert _off_polyline_rad(raw, waypoints) > 0.05  # what this exists for
    assert _off_polyline_rad(ours, waypoints) < 0.01
    np.testing.assert_allclose(ours[-1], waypoints[-1], atol=1e-6)


def test_densify_keeps_the_waypoints_and_bounds_each_step() -> None:
    path = np.array([[0.0, 0.0], [0.3, -0.1], [0.3, 0.0]])
    dense = densify(path, WAYPOINT_STEP_RAD)
    assert float(np.max(np.abs(np.diff(dense, axis=0)))) <= WAYPOINT_STEP_RAD + 1e-12
    for row in path:
        assert np.min(np.linalg.norm(dense - row, axis=1)) < 1e-12


def test_an_arm_starting_in_contact_moves_out_of_it(world: SimWorld) -> None:
    """A gripper that let go beside an object starts in contact with its box: the plan leaves the contact (as
    RRT-Connect allows), while the margin pass, which needs a free start, gives way at once."""
    motion, planner = world.skills.motion, world.planners["left"]
    q = world.arms["left"].joint_positions_rad()
    goal = q + np.array([0.4, -0.2, 0.0, 0.0, 0.0, 0.0])
    motion.sync_planner("left", with_objects=False)
    planner.set_object_boxes(_beside_the_open_fingers(world))
    try:
        assert planner.in_collision(q)
        away = planner.plan_to_qpos(goal, q)
        assert away.ok, away.message
        assert not planner.touches(away.path_rad)
        assert not planner.in_collision(away.path_rad[-1])
        strict = planner.plan_to_qpos(goal, q, free_start=True)
        assert not strict.ok and "start is in collision" in strict.message
    finally:
        motion.sync_planner("left", with_objects=True)


def test_a_held_object_is_checked_where_it_is(world: SimWorld) -> None:
    """A held object's box moves with the end-effector in the world frame, and goes when it is let go. mplib puts
    an attached box at the link's pose relative to the arm's base; with the base mounted off the origin it stood
    elsewhere, so a held toy was pulled through a basket's handle its plan had avoided (place_object_basket,
    development seed 760079)."""
    motion, planner = world.skills.motion, world.planners["left"]
    q = world.arms["left"].joint_positions_rad()
    T = world.arms["left"].ee_pose().as_matrix()
    held_at = T[:3, 3] + 0.20 * T[:3, 0]  # a 4 cm box held 0.20 m out along the approach, past the fingers
    obstacle = {"wall_piece": ((0.05, 0.05, 0.05), Pose.from_arrays(held_at, (1.0, 0.0, 0.0, 0.0)))}
    aside = q + np.array([0.3, 0.0, 0.0, 0.0, 0.0, 0.0])  # the base joint turned: the held box 0.1 m off
    motion.sync_planner("left", with_objects=False)
    planner.set_object_boxes(obstacle)
    try:
        assert not planner.in_collision(q)  # the arm and its fingers stop short of the obstacle
        planner.attach_box("toy", (0.04, 0.04, 0.04), Pose((0.20, 0.0, 0.0)), aside)
        assert not planner.in_collision(aside)
        assert planner.in_collision(q)  # the held box would be in the obstacle
        assert not planner.plan_to_qpos(q, aside).ok
        planner.detach()
        assert not planner.in_collision(q)  # let go: nothing is carried any more
        assert planner.plan_to_qpos(q, aside).ok
    finally:
        planner.detach()
        motion.sync_planner("left", with_objects=True)


def test_a_held_object_may_leave_what_it_touches_at_the_start(world: SimWorld) -> None:
    """An object lifted off the table, or out from beside a neighbour whose box its own overlaps, starts in
    contact: that contact is allowed during the next motion only."""
    motion, planner = world.skills.motion, world.planners["left"]
    q = world.arms["left"].joint_positions_rad()
    T = world.arms["left"].ee_pose().as_matrix()
    held_at = T[:3, 3] + 0.20 * T[:3, 0]
    obstacle = {"neighbour": ((0.05, 0.05, 0.05), Pose.from_arrays(held_at, (1.0, 0.0, 0.0, 0.0)))}
    aside = q + np.array([0.3, 0.0, 0.0, 0.0, 0.0, 0.0])
    motion.sync_planner("left", with_objects=False)
    planner.set_object_boxes(obstacle)
    try:
        planner.attach_box("toy", (0.04, 0.04, 0.04), Pose((0.20, 0.0, 0.0)), q)
        assert not planner.in_collision(q)
        assert planner.plan_to_qpos(aside, q).ok
        planner.attach_box("toy", (0.04, 0.04, 0.04), Pose((0.20, 0.0, 0.0)), aside)  # the next motion
        assert planner.in_collision(q)
    finally:
        planner.detach()
        motion.sync_planner("left", with_objects=True)


def _passes_tried(world: SimWorld, monkeypatch: pytest.MonkeyPatch, start_touches: bool) -> list[tuple[float, bool]]:
    """The (margin, closed fingers) passes a free move of the left arm tries when every search fails."""
    motion, planner = world.skills.motion, world.planners["left"]
    tried: list[tuple[float, bool]] = []
    real_sync = motion.sync_planner

    def sync(side: str, with_objects: bool, exclude: frozenset[str] = frozenset(), opening: float | None = None,
             margin_m: float = 0.0, closed_fingers: bool = False) -> None:
        if with_objects:
            tried.append((margin_m, closed_fingers))
        real_sync(side, with_objects, exclude, opening, margin_m, closed_fingers)  # type: ignore[arg-type]

    def no_path(*_: object, **__: object) -> PlanResult:
        return PlanResult(False, "rrt_connect planning failed: test", "rrt_connect", np.zeros((0, 6)))

    monkeypatch.setattr(motion, "sync_planner", sync)
    monkeypatch.setattr(planner, "plan_to_pose", no_path)
    monkeypatch.setattr(planner, "in_collision", lambda q: start_touches)
    ee = world.arms["left"].ee_pose()
    target = Pose.from_arrays(ee.p + np.array([0.0, 0.05, 0.0]), ee.quat_wxyz)
    result = motion.plan("left", target, "free")
    assert isinstance(result, Failure)
    return tried


def test_open_fingers_are_planned_closed_only_where_they_start_in_collision(
    world: SimWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The closed-fingers pass is for a gripper that let go beside what it held; tried from a free start, its
    path swept open fingers through a bottle standing beside it (put_bottles_dustbin, development seed 760012)."""
    open_passes = [(FREE_MOVE_MARGIN_M, False), (NARROW_MARGIN_M, False), (0.0, False)]
    assert _passes_tried(world, monkeypatch, start_touches=False) == open_passes
    monkeypatch.undo()
    assert _passes_tried(world, monkeypatch, start_touches=True) == [*open_passes, (0.0, True)]


def test_an_ik_answer_a_hair_past_a_joint_limit_is_planned_to(world: SimWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    """mplib's IK may answer a little past a joint limit (within its wrap tolerance); RRT-Connect then timed out
    on every search (place_burger_fries_ee, seed 780000: joint 6 at 2.0946 rad, its limit 2.0944)."""
    motion, planner = world.skills.motion, world.planners["left"]
    motion.sync_planner("left", with_objects=True)
    q0 = world.arms["left"].joint_positions_rad()
    limits = planner.joint_limits_rad
    q_goal = q0.copy()
    q_goal[5] = limits[5, 1]
    past = q_goal.copy()
    past[5] += 2.5e-4
    monkeypatch.setattr(planner._planner, "IK", lambda *_, **__: ("Success", planner._full(past)))
    result = planner.plan_to_pose(planner.fk(q_goal), q0)
    assert result.ok, result.message
    np.testing.assert_allclose(result.path_rad[-1], q_goal, atol=1e-6)
    assert np.all(result.path_rad <= limits[:, 1] + 1e-9)


def test_a_start_near_one_object_keeps_the_margin_around_the_others(
    world: SimWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An arm whose fingers start within the 1.5 cm margin of one object (a raised gripper above a tall bottle)
    plans its margin pass with the 4 mm margin around that object only. Before, the pass failed at once for the
    start, the 4 mm pass found no path either, and the shrunk boxes' path clipped the bottle's top
    (put_bottles_dustbin, seed 810018)."""
    motion = world.skills.motion
    block = world.objects["red_block"]
    home = block.entity.get_pose()
    T = world.arms["left"].ee_pose().as_matrix()
    tcp = T[:3, 3] + world.embodiment.tcp_offset_m * T[:3, 0]
    half = block.size_m[2] / 2
    centre = tcp + (half + 0.01) * T[:3, 0]  # its near face 1 cm beyond the fingertips, along the approach
    block.entity.set_pose(sapien.Pose(centre - np.array([0.0, 0.0, half])))  # its origin: the bottom centre
    synced: list[tuple[float, dict[str, float] | None]] = []
    real_sync = motion.sync_planner

    def sync(*args: object, **kw: object) -> None:
        if kw.get("with_objects"):
            synced.append((float(kw.get("margin_m", 0.0)), kw.get("margins_m")))  # type: ignore[arg-type]
        real_sync(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(motion, "sync_planner", sync)
    try:
        ee = world.arms["left"].ee_pose()
        aside = Pose.from_arrays(ee.p + np.array([0.0, 0.06, 0.04]), ee.quat_wxyz)
        result = motion.plan("left", aside, "free")
        assert not isinstance(result, Failure), result
        assert synced[0] == (FREE_MOVE_MARGIN_M, None)
        assert synced[1] == (FREE_MOVE_MARGIN_M, {"red_block": NARROW_MARGIN_M})
        assert len(synced) == 2, "the margin pass found the path"
    finally:
        block.entity.set_pose(home)
        monkeypatch.undo()
        motion.sync_planner("left", with_objects=True)
