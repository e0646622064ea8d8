"""RigSkills end to end: two emulated Pipers on python-can virtual buses, a fixed world model, the safety guard."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from mallvi.contracts.devices import DualArm
from mallvi.contracts.geometry import Pose
from mallvi.contracts.skills import FailureKind
from mallvi.contracts.world_model import ObjectInfo
from mallvi.robot_drivers.calibration.calibration_files import mount_matrix
from mallvi.robot_drivers.piper.config_piper import PIPER_JOINT_LIMITS_RAD, PiperConfig
from mallvi.robot_drivers.piper.piper import PiperArm
from mallvi.robot_drivers.piper.piper_emulator import PiperEmulator
from mallvi.robot_drivers.rig_skills.rig_skills import RigSkills, RigSkillsConfig
from mallvi.robot_drivers.safety.guard import SafetyConfig, SafetyGuard
from tests.fixtures.malformed_args import malformed_call, skill_defaults
from tests.fixtures.world_models import FixedWorld

CUBE = ObjectInfo("red_cube", "cube", Pose((-0.2, 0.0, 0.77)), (0.04, 0.04, 0.04), "red")


@dataclass
class Rig:
    skills: RigSkills
    dual: DualArm
    emus: dict[str, PiperEmulator]

    def sent(self) -> int:
        return sum(e.command_count() for e in self.emus.values())


def _guard() -> SafetyGuard:
    limits = tuple(PIPER_JOINT_LIMITS_RAD)
    return SafetyGuard(SafetyConfig(table_top_z_m=0.75, joint_limits_rad={"left": limits, "right": limits}))


def _recover(rig: Rig) -> None:
    """Clear faults and emergency stops so the next test starts from an enabled rig."""
    for emu in rig.emus.values():
        emu.inject_fault(0x00)
    for arm in (rig.dual.left, rig.dual.right):
        assert isinstance(arm, PiperArm)
        arm.reset_after_stop()
        arm.enable()


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    tag = uuid.uuid4().hex[:6]
    emus = {side: PiperEmulator(f"rig_{side}_{tag}", object_width_m=0.03).start() for side in ("left", "right")}
    arms = {}
    for side, x in (("left", -0.30), ("right", 0.30)):
        cfg = PiperConfig(side=side, can_name=f"rig_{side}_{tag}", bus_type="virtual", speed_percent=100,
                          base_pose_world=Pose.from_matrix(mount_matrix(x, -0.30, 0.95, 90.0)), motion_timeout_s=10.0,
                          feedback_timeout_s=5.0)  # generous: the test machine's two cores are shared
        arms[side] = PiperArm(cfg)
        arms[side].connect()
        arms[side].enable()
    dual = DualArm(left=arms["left"], right=arms["right"])
    skills = RigSkills(dual, FixedWorld(CUBE), _guard(), config=RigSkillsConfig(ee_speed_m_s=0.4, step_m=0.02))
    yield Rig(skills, dual, emus)
    for a in arms.values():
        a.disconnect()
    for e in emus.values():
        e.close()


def test_grasp_and_place_through_the_driver(rig: Rig) -> None:
    before = len(rig.emus["left"].frames_with_id(0x152))
    result = rig.skills.grasp_actor("red_cube", "left")
    assert result.ok, result.message
    kinds = [c["kind"] for c in result.data["commands"]]
    assert kinds == ["open", "pre-grasp", "approach", "close", "lift"]
    assert len(rig.emus["left"].frames_with_id(0x152)) > before  # end-pose targets reached the left arm's bus
    assert rig.dual.left.gripper_opening() == pytest.approx(0.03 / 0.07, abs=0.03)  # stalled on the cube
    ee = rig.dual.left.ee_pose()
    assert ee.p == pytest.approx([-0.2, 0.0, 0.77 + 0.12 + 0.08], abs=0.004)
    assert ee.as_matrix()[:3, 0] == pytest.approx([0, 0, -1], abs=0.01)  # approach points down
    # of the two finger directions along world x, the one that keeps the left wrist near mid-range (-x)
    assert ee.as_matrix()[:3, 1] == pytest.approx([-1, 0, 0], abs=0.01)

    placed = rig.skills.place_actor("red_cube", "left", [-0.1, 0.05, 0.75])
    assert placed.ok, placed.message
    assert rig.dual.left.gripper_opening() > 0.9
    assert rig.dual.left.ee_pose().p[:2] == pytest.approx([-0.1, 0.05], abs=0.004)


def test_dry_run_plans_but_sends_nothing(rig: Rig) -> None:
    dry = RigSkills(rig.dual, FixedWorld(CUBE), _guard(), config=RigSkillsConfig(dry_run=True))
    before = rig.sent()
    result = dry.grasp_actor("red_cube", "left")
    assert result.ok and result.data["dry_run"] is True
    assert [c["kind"] for c in result.data["commands"]] == ["open", "pre-grasp", "approach", "close", "lift"]
    assert result.data["commands"][2]["goal"][:3] == pytest.approx([-0.2, 0.0, 0.89], abs=1e-6)
    assert rig.sent() == before


def test_refusals_never_reach_the_bus(rig: Rig) -> None:
    before = rig.sent()
    outside = rig.skills.move_to_pose("left", [-0.2, 0.0, 2.5, 0, 1, 0, 0])
    assert not outside.ok and "workspace" in outside.message and outside.kind == FailureKind.REFUSED_BY_GUARD
    below = rig.skills.move_to_pose("left", [-0.2, 0.0, 0.80, 0.7071, 0, 0.7071, 0])  # x = approach = down
    assert not below.ok and "below the table" in below.message and below.kind == FailureKind.REFUSED_BY_GUARD
    unknown = rig.skills.grasp_actor("blue_mug", "left")
    assert not unknown.ok and "blue_mug" in unknown.message and unknown.kind == FailureKind.UNKNOWN_OBJECT
    near_other = rig.skills.move_to_pose("left", rig.dual.right.ee_pose().as_list())
    assert not near_other.ok and "clearance" in near_other.message
    assert near_other.kind == FailureKind.REFUSED_BY_GUARD
    assert rig.sent() == before


def test_depth_cloud_obstacle_blocks_the_path(rig: Rig) -> None:
    start = rig.dual.left.ee_pose()
    goal = Pose.from_arrays(start.p + np.array([0.15, 0.0, 0.0]), start.q)
    wall = np.array([[start.p[0] + 0.075, start.p[1] + dy, start.p[2] + dz]
                     for dy in np.linspace(-0.2, 0.2, 21) for dz in np.linspace(-0.3, 0.1, 21)])
    blocked = RigSkills(rig.dual, FixedWorld(CUBE), _guard(), cloud_world=lambda: wall)
    before = rig.sent()
    result = blocked.move_to_pose("left", goal.as_list())
    assert not result.ok and "obstacle point" in result.message and result.kind == FailureKind.REFUSED_BY_GUARD
    assert rig.sent() == before
    clear = RigSkills(rig.dual, FixedWorld(CUBE), _guard(), cloud_world=lambda: wall + np.array([0, 0, 1.0]),
                      config=RigSkillsConfig(ee_speed_m_s=0.4, step_m=0.02))
    assert clear.move_to_pose("left", goal.as_list()).ok


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    x=st.one_of(st.floats(-3.0, -0.81), st.floats(0.41, 3.0), st.just(float("nan")), st.just(float("inf"))),
    y=st.floats(-0.5, 0.4),
    z=st.floats(0.6, 1.5),
)
def test_property_refused_targets_send_no_frame(rig: Rig, x: float, y: float, z: float) -> None:
    before = rig.sent()
    result = rig.skills.move_to_pose("left", [x, y, z, 1.0, 0.0, 0.0, 0.0])
    assert not result.ok and "driver fault" not in result.message
    assert rig.sent() == before


def test_driver_fault_stops_both_arms(rig: Rig) -> None:
    rig.emus["left"].inject_fault(0x07)
    import time

    time.sleep(0.1)
    try:
        result = rig.skills.move_by_displacement("left", z=0.02)
        assert not result.ok
        assert "both arms stopped" in result.message and "collision" in result.message
        assert result.kind == FailureKind.DEVICE_FAULT
        for emu in rig.emus.values():
            assert emu.wait_for_frames(0x150)[-1][0] == 0x01
    finally:
        _recover(rig)


def test_ctrl_c_stops_both_arms(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(rig.dual.left, "follow_ee_path", interrupted)
    n_stop = {s: len(e.frames_with_id(0x150)) for s, e in rig.emus.items()}
    try:
        with pytest.raises(KeyboardInterrupt):
            rig.skills.move_by_displacement("left", z=0.02)
        import time

        time.sleep(0.1)
        for side, emu in rig.emus.items():
            assert len(emu.frames_with_id(0x150)) > n_stop[side]
            assert emu.frames_with_id(0x150)[-1][0] == 0x01
    finally:
        monkeypatch.undo()
        _recover(rig)


BAR = ObjectInfo("red_bar", "block", Pose((-0.22, -0.05, 0.765)), (0.20, 0.03, 0.03), "red")  # lying along x


def test_upright_actor_swings_a_lying_bar_up_in_a_loosened_grip_then_places_it_standing(rig: Rig) -> None:
    skills = RigSkills(rig.dual, FixedWorld(BAR), _guard(),
                       config=RigSkillsConfig(ee_speed_m_s=0.4, step_m=0.02, swing_dwell_s=0.05))
    result = skills.upright_actor("red_bar", "left")
    assert result.ok, result.message
    commands = result.data["commands"]
    assert [c["kind"] for c in commands] == ["open", "pre-grasp", "approach", "close", "lift to pivot", "loosen",
                                             "swing", "close"]
    approach, pivot, loosen = commands[2]["goal"], commands[4]["goal"], commands[5]["opening"]
    assert approach[:3] == pytest.approx([-0.22 - 0.065, -0.05, 0.765 + 0.12], abs=1e-3), "the end nearer the arm"
    # hanging 0.165 m below the grasp, the bar clears the table (0.75) by 3 cm
    assert pivot[2] - 0.12 - 0.165 == pytest.approx(0.75 + 0.03, abs=1e-3)
    assert loosen == pytest.approx((0.03 + 0.004) / 0.07, abs=1e-3), "opened to just over the bar's width"
    assert rig.dual.left.gripper_opening() == pytest.approx(0.03 / 0.07, abs=0.03), "closed on it again"
    placed = skills.place_actor("red_bar", "left", [-0.15, -0.05, 0.75])
    assert placed.ok, placed.message
    lower = next(c for c in placed.data["commands"] if c["kind"] == "lower")
    assert lower["goal"][2] == pytest.approx(0.75 + 0.165 + 0.02 + 0.12, abs=1e-3), "its bottom on the target"


def test_upright_actor_grasps_a_standing_object_as_it_stands(rig: Rig) -> None:
    skills = RigSkills(rig.dual, FixedWorld(CUBE), _guard(), config=RigSkillsConfig(dry_run=True))
    result = skills.upright_actor("red_cube", "left")
    assert result.ok and result.data["already_upright"] is True
    assert "does not lie on its side" in result.message
    assert [c["kind"] for c in result.data["commands"]] == ["open", "pre-grasp", "approach", "close", "lift"]


REFUSED_KINDS = {FailureKind.BAD_PARAMETERS, FailureKind.UNKNOWN_OBJECT, FailureKind.NOT_HOLDING,
                 FailureKind.REFUSED_BY_GUARD}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=malformed_call(skill_defaults("red_cube", "left", [-0.2, 0.0, 0.95, 0.7071, 0.0, 0.7071, 0.0])))
def test_property_malformed_arguments_fail_with_a_kind_and_send_nothing(
        rig: Rig, call: tuple[str, dict[str, Any]]) -> None:
    skill, kwargs = call
    before = rig.sent()
    result = getattr(rig.skills, skill)(**kwargs)  # must return, never raise
    assert not result.ok and result.kind in REFUSED_KINDS, (skill, kwargs, result)
    assert rig.sent() == before


def _rolled(pose: Pose, deg: float) -> list[float]:
    w, x, y, z = pose.quat_wxyz
    qx, qy, qz, qw = (Rotation.from_quat([x, y, z, w]) * Rotation.from_euler("x", deg, degrees=True)).as_quat()
    return [float(qw), float(qx), float(qy), float(qz)]


def test_a_rotation_only_displacement_turns_the_gripper_on_the_rig(rig: Rig) -> None:
    start = rig.dual.left.ee_pose()
    goal_q = _rolled(start, 45.0)
    r = rig.skills.move_by_displacement("left", quat=goal_q)
    assert r.ok, r.message
    now = rig.dual.left.ee_pose()
    turn_deg = math.degrees(2 * math.acos(min(1.0, abs(float(np.dot(now.q, np.asarray(goal_q)))))))
    assert turn_deg < 2.0 and now.p == pytest.approx(start.p, abs=0.004)
    assert rig.skills.move_by_displacement("left", quat=list(start.quat_wxyz)).ok


def test_a_non_unit_quaternion_is_refused_on_the_rig_and_nothing_is_sent(rig: Rig) -> None:
    before = rig.sent()
    ee = rig.dual.left.ee_pose()
    for quat in ([2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]):
        r = rig.skills.move_to_pose("left", [*ee.position_m, *quat])
        assert not r.ok and r.kind == FailureKind.BAD_PARAMETERS and "not a unit quaternion" in r.message
        r = rig.skills.move_by_displacement("left", z=0.01, quat=quat)
        assert not r.ok and r.kind == FailureKind.BAD_PARAMETERS and "0.001" in r.message
    assert rig.sent() == before
