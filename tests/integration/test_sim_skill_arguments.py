"""Simulated skills in SAPIEN: malformed arguments are refused with a kind (never raised), a non-unit quaternion
is refused rather than normalised, a rotation-only command really rotates, and real failures carry their kind."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import sapien
from hypothesis import HealthCheck, given, settings
from scipy.spatial.transform import Rotation

from mallvi.contracts.geometry import ARM_SIDES, Pose
from mallvi.contracts.skills import FailureKind
from mallvi.sim_bridge.layout import top_down_quat_wxyz
from mallvi.sim_bridge.objects import make_block
from mallvi.sim_bridge.randomization import table_pose
from mallvi.sim_bridge.scene_spec import SceneContents, SceneSpec
from mallvi.sim_bridge.world import SimWorld
from tests.fixtures.malformed_args import malformed_call, skill_defaults

CUBES = {"red_block": (-0.25, 0.0), "blue_block": (0.25, 0.0)}
REFUSED_KINDS = {FailureKind.BAD_PARAMETERS, FailureKind.UNKNOWN_OBJECT, FailureKind.NOT_HOLDING,
                 FailureKind.REFUSED_BY_GUARD}  # what a malformed call may be refused as: nothing moves


def _build(scene: sapien.Scene, rng: np.random.Generator, table_top_z: float) -> SceneContents:
    objects = {name: make_block(scene, name, table_pose(x, y, table_top_z, 0.0), color=name.split("_")[0])
               for name, (x, y) in CUBES.items()}
    return SceneContents(objects, "put the red block on the blue block")


TWO_CUBES = SceneSpec("test_two_cubes", _build, arm_spacing_m=0.7)


def two_cubes_world() -> Iterator[SimWorld]:
    """A settled world of ``TWO_CUBES`` (seed 3, no rendering), closed when the generator is."""
    w = SimWorld.create(TWO_CUBES, seed=3, render=False)
    w.settle()
    yield w
    w.close()


@pytest.fixture(scope="module")
def world() -> Iterator[SimWorld]:
    yield from two_cubes_world()


def _joints(world: SimWorld) -> np.ndarray:
    return np.concatenate([world.arms[s].joint_positions_rad() for s in ARM_SIDES])


def _turn_deg(a: Pose, b: Pose) -> float:
    return math.degrees(2.0 * math.acos(min(1.0, abs(float(np.dot(a.q, b.q))))))


def _rolled(pose: Pose, deg: float) -> list[float]:
    """``pose``'s quaternion turned ``deg`` about its own approach (x) axis."""
    w, x, y, z = pose.quat_wxyz
    r = Rotation.from_quat([x, y, z, w]) * Rotation.from_euler("x", deg, degrees=True)
    qx, qy, qz, qw = r.as_quat()
    return [float(qw), float(qx), float(qy), float(qz)]


def test_a_rotation_only_displacement_turns_the_gripper(world: SimWorld) -> None:
    start = world.arms["right"].ee_pose()
    goal_q = _rolled(start, 60.0)
    r = world.skills.move_by_displacement("right", quat=goal_q)
    assert r.ok, r.message
    now = world.arms["right"].ee_pose()
    assert _turn_deg(now, Pose(start.position_m, tuple(goal_q))) < 2.0  # type: ignore[arg-type]
    assert np.allclose(now.p, start.p, atol=0.005)
    back = world.skills.move_by_displacement("right", quat=list(start.quat_wxyz))
    assert back.ok and _turn_deg(world.arms["right"].ee_pose(), start) < 2.0


def test_a_rotation_only_end_effector_action_turns_the_gripper(world: SimWorld) -> None:
    left, right = world.arms["left"].ee_pose(), world.arms["right"].ee_pose()
    goal_q = _rolled(left, 60.0)
    r = world.skills.execute_ee_action([*left.position_m, *goal_q, 1.0, *right.as_list(), 1.0])
    assert r.ok, r.message
    now = world.arms["left"].ee_pose()
    assert _turn_deg(now, Pose(left.position_m, tuple(goal_q))) < 2.0  # type: ignore[arg-type]
    assert world.skills.execute_ee_action([*left.as_list(), 1.0, *right.as_list(), 1.0]).ok


@pytest.mark.parametrize("quat", [[2.0, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0], [0.7, 0.7, 0.2, 0.1]])
def test_a_non_unit_quaternion_is_refused_with_the_tolerance_and_nothing_moves(
        world: SimWorld, quat: list[float]) -> None:
    before = _joints(world)
    ee = world.arms["right"].ee_pose()
    for r in (world.skills.move_to_pose("right", [*ee.position_m, *quat]),
              world.skills.move_by_displacement("right", z=0.01, quat=quat),
              world.skills.execute_ee_action([*world.arms["left"].ee_pose().as_list(), 1.0, *ee.position_m, *quat,
                                              1.0])):
        assert not r.ok and r.kind == FailureKind.BAD_PARAMETERS, r.message
        assert "not a unit quaternion" in r.message and "0.001" in r.message
    assert np.allclose(_joints(world), before)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=malformed_call(skill_defaults("red_block", "left", [-0.25, 0.0, 0.95, *top_down_quat_wxyz(0.0)])))
def test_property_malformed_arguments_fail_with_a_kind_and_move_nothing(
        world: SimWorld, call: tuple[str, dict[str, Any]]) -> None:
    skill, kwargs = call
    before = _joints(world)
    result = getattr(world.skills, skill)(**kwargs)  # must return, never raise
    assert not result.ok and result.kind in REFUSED_KINDS, (skill, kwargs, result)
    assert np.allclose(_joints(world), before)


def test_the_examples_of_the_report_fail_cleanly(world: SimWorld) -> None:
    assert world.skills.open_gripper("left", "abc").kind == FailureKind.BAD_PARAMETERS  # type: ignore[arg-type]
    assert world.skills.close_gripper("left", None).kind == FailureKind.BAD_PARAMETERS  # type: ignore[arg-type]
    r = world.skills.grasp_actor("red_block", "left", pre_grasp_dis="far")  # type: ignore[arg-type]
    assert r.kind == FailureKind.BAD_PARAMETERS and "pre_grasp_dis" in r.message
    zero = world.skills.move_to_pose("left", [-0.25, 0.0, 0.95, 0.0, 0.0, 0.0, 0.0])
    assert zero.kind == FailureKind.BAD_PARAMETERS and "norm 0" in zero.message


def test_a_grasp_whose_object_was_pushed_away_closes_on_nothing() -> None:
    with SimWorld.create(TWO_CUBES, seed=3, render=False, contingency="grasp_miss=1") as w:
        r = w.skills.grasp_actor("red_block", "left")
        assert not r.ok and r.kind == FailureKind.GRASP_EMPTY and "closed on nothing" in r.message
        assert [f["kind"] for f in w.injected_faults] == ["grasp_miss"]


def test_fingers_closed_on_one_object_are_off_target_for_another(world: SimWorld) -> None:
    r = world.skills.grasp_actor("blue_block", "right")
    assert r.ok, r.message
    name, why = world.holder.try_hold("right", expected="red_block")
    assert name is None and why is not None and why.kind == FailureKind.GRASP_OFF_TARGET
    assert world.skills.open_gripper("right").ok and world.skills.back_to_origin("right").ok


def test_a_place_whose_object_comes_away_with_the_gripper_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    with SimWorld.create(TWO_CUBES, seed=3, render=False) as w:
        w.settle()
        assert w.skills.grasp_actor("red_block", "left").ok
        start = w.objects["red_block"].entity.get_pose().p.copy()
        monkeypatch.setattr(w.arms["left"], "set_gripper", lambda *a, **k: None)  # fingers that never open
        r = w.skills.place_actor("red_block", "left", [float(start[0]) + 0.05, float(start[1]), float(w.table_top_z)])
        assert not r.ok and r.kind == FailureKind.EXECUTION and "came away with the left gripper" in r.message
        assert w.objects["red_block"].entity.get_pose().p[2] > start[2]  # it really hangs in the fingers
        monkeypatch.undo()
        assert w.skills.open_gripper("left").ok
        w.settle()
        r = w.skills.grasp_actor("red_block", "left")
        assert r.ok, r.message
        here = w.objects["red_block"].entity.get_pose().p
        ok = w.skills.place_actor("red_block", "left", [float(here[0]) + 0.05, float(here[1]), float(w.table_top_z)])
        assert ok.ok, ok.message  # a place that lets go still succeeds
