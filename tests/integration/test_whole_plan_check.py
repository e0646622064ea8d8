"""A plan is checked whole, every argument of every call, before its first motion: a plan whose second call has a
zero quaternion or an unknown keyword moves nothing (the grasp of its first call does not happen) on the
simulated skills, on the rig's skills over emulated Pipers, and in the benchmark's Tier 2 and Tier 3 chunks."""

from __future__ import annotations

import dataclasses
import sys
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from mallvi.bench.actions import make_action
from mallvi.bench.agents.agent_protocols import PlanReply, TurnRecord
from mallvi.bench.loop import run_fine, run_planning
from mallvi.bench.tasks import get_task
from mallvi.contracts.devices import DualArm
from mallvi.contracts.geometry import ARM_SIDES, Pose
from mallvi.contracts.skills import SkillAPI
from mallvi.contracts.world_model import ObjectInfo, WorldModel
from mallvi.graph.nodes.actor import actor
from mallvi.graph.schemas import ActionPlan, ActorReport, SceneObject, SkillCall
from mallvi.robot_drivers.calibration.calibration_files import mount_matrix
from mallvi.robot_drivers.piper.config_piper import PIPER_JOINT_LIMITS_RAD, PiperConfig
from mallvi.robot_drivers.piper.piper import PiperArm
from mallvi.robot_drivers.piper.piper_emulator import PiperEmulator
from mallvi.robot_drivers.rig_skills.rig_skills import RigSkills, RigSkillsConfig
from mallvi.robot_drivers.safety.guard import SafetyConfig, SafetyGuard
from mallvi.sim_bridge.world import SimWorld
from mallvi.tracing.trace import TraceWriter, read_events

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.fixtures
from tests.fixtures.graph_fakes import FakeWorld, fake_context
from tests.fixtures.world_models import FixedWorld

DOWN = [0.0, 0.7071068, 0.0, 0.7071068]  # a gripper pointing down
ZERO_QUAT = [0.0, 0.0, 0.0, 0.0]


def _bad_second_calls(obj: str, arm: str, target_xyz: Sequence[float]) -> list[tuple[SkillCall, list[str]]]:
    return [
        (SkillCall(skill="place_actor", arm=arm, object=obj, target_pose=[*target_xyz, *ZERO_QUAT]),  # type: ignore[arg-type]
         ["call 2 of 2 (place_actor", "target_pose", "norm 0"]),
        (SkillCall(skill="place_actor", arm=arm, object=obj, target_pose=[*target_xyz, *DOWN],  # type: ignore[arg-type]
                   args={"speed": 0.5}), ["call 2 of 2 (place_actor", "no argument(s) 'speed'"]),
    ]


def _run_actor(skills: SkillAPI, world: WorldModel, calls: list[SkillCall], table_z: float) -> ActorReport:
    """The Actor node on ``skills``, every object of ``world`` localised where it is."""
    ctx = dataclasses.replace(fake_context(FakeWorld.blocks()), skills=skills, world=world, table_top_z=table_z,
                              workspace_m=None, gripper_holding=None)
    localized = {}
    for name in world.object_names():
        info = world.get_object(name)
        localized[name] = SceneObject(id=name, label="block", position_m=tuple(info.pose.position_m),  # type: ignore[arg-type]
                                      size_m=tuple(info.size_m))  # type: ignore[arg-type]
    state = {"action_plan": ActionPlan(calls=calls), "localized": localized, "attempts": {}, "subtask_index": 0}
    report: ActorReport = actor(state, SimpleNamespace(context=ctx))["actor_report"]  # type: ignore[arg-type]
    return report


# -- the simulated skills ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sim() -> Iterator[SimWorld]:
    with SimWorld.create("stack_blocks_two", 3, render=False) as w:
        w.settle()
        yield w


def _sim_state(w: SimWorld) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    joints = np.concatenate([w.arms[s].joint_positions_rad() for s in ARM_SIDES])
    return joints, {n: np.array(o.pose.p) for n, o in w.objects.items()}


@pytest.mark.parametrize("case", [0, 1])
def test_on_the_simulated_skills_a_bad_second_call_moves_nothing(sim: SimWorld, case: int) -> None:
    obj = sorted(sim.objects)[0]
    p = sim.objects[obj].pose.p
    arm = "left" if p[0] < 0 else "right"
    second, words = _bad_second_calls(obj, arm, [float(p[0]), float(p[1]) + 0.1, float(p[2])])[case]
    joints, objects = _sim_state(sim)
    report = _run_actor(sim.skills, sim.truth, [SkillCall(skill="grasp_actor", arm=arm, object=obj), second],  # type: ignore[arg-type]
                        sim.table_top_z)
    assert not report.ok and report.failed_step is not None and report.failed_step.kind == "bad_parameters"
    assert report.commands == [] and "before anything moved" in report.message
    for w in words:
        assert w in report.message, report.message
    joints_after, objects_after = _sim_state(sim)
    np.testing.assert_allclose(joints_after, joints, atol=1e-9)  # the grasp did not happen
    for name, xyz in objects.items():
        np.testing.assert_allclose(objects_after[name], xyz, atol=1e-6)
    assert sim.holder.held_by(arm) is None  # type: ignore[arg-type]


# -- the rig's skills over emulated Pipers -------------------------------------------------------------------------

CUBE = ObjectInfo("red_cube", "cube", Pose((-0.2, 0.0, 0.77)), (0.04, 0.04, 0.04), "red")


@pytest.fixture(scope="module")
def rig() -> Iterator[tuple[RigSkills, dict[str, PiperEmulator]]]:
    tag = uuid.uuid4().hex[:6]
    emus = {side: PiperEmulator(f"wp_{side}_{tag}", object_width_m=0.03).start() for side in ARM_SIDES}
    arms: dict[str, PiperArm] = {}
    for side, x in (("left", -0.30), ("right", 0.30)):
        cfg = PiperConfig(side=side, can_name=f"wp_{side}_{tag}", bus_type="virtual", speed_percent=100,  # type: ignore[arg-type]
                          base_pose_world=Pose.from_matrix(mount_matrix(x, -0.30, 0.95, 90.0)), motion_timeout_s=10.0,
                          feedback_timeout_s=5.0)
        arms[side] = PiperArm(cfg)
        arms[side].connect()
        arms[side].enable()
    limits = tuple(PIPER_JOINT_LIMITS_RAD)
    guard = SafetyGuard(SafetyConfig(table_top_z_m=0.75, joint_limits_rad={"left": limits, "right": limits}))
    skills = RigSkills(DualArm(left=arms["left"], right=arms["right"]), FixedWorld(CUBE), guard,
                       config=RigSkillsConfig(ee_speed_m_s=0.4, step_m=0.02))
    yield skills, emus
    for a in arms.values():
        a.disconnect()
    for e in emus.values():
        e.close()


@pytest.mark.parametrize("case", [0, 1])
def test_on_the_rig_a_bad_second_call_sends_nothing_to_the_arms(
        rig: tuple[RigSkills, dict[str, PiperEmulator]], case: int) -> None:
    skills, emus = rig
    second, words = _bad_second_calls("red_cube", "left", [-0.1, 0.05, 0.75])[case]
    sent = sum(e.command_count() for e in emus.values())
    report = _run_actor(skills, FixedWorld(CUBE), [SkillCall(skill="grasp_actor", arm="left", object="red_cube"),
                                                   second], 0.75)
    assert not report.ok and report.commands == []
    for w in words:
        assert w in report.message, report.message
    assert sum(e.command_count() for e in emus.values()) == sent  # not one frame reached a bus


# -- the benchmark's chunks -------------------------------------------------------------------------------------

class _Scripted:
    """A planner that answers every turn with the same actions."""

    def __init__(self, actions: list[Any]) -> None:
        self.actions = actions
        self.histories: list[list[TurnRecord]] = []

    def reset(self, task: Any, world: Any) -> None:
        pass

    def plan(self, task: Any, world: Any, history: Sequence[TurnRecord], turn: int) -> PlanReply:
        self.histories.append(list(history))
        return PlanReply(actions=list(self.actions))


def _bench_world(name: str) -> tuple[Any, SimWorld]:
    task = get_task(name)
    world = SimWorld.create(task.scene_spec(), 100000, render=False,
                            grasp_refusal_threshold_m=task.allocation_threshold_m)
    world.settle()
    return task, world


def _grasp_then_bad_place(world: SimWorld) -> list[Any]:
    """A grasp of the first object by its side's arm, then a place whose quaternion is all zeros."""
    obj = sorted(world.objects)[0]
    p = world.objects[obj].pose.p
    arm = "left" if p[0] < 0 else "right"
    return [make_action("grasp_actor", actor=obj, arm_tag=arm),
            make_action("place_actor", actor=obj, arm_tag=arm,
                        target_pose=[float(p[0]), float(p[1]) + 0.1, float(p[2]), *ZERO_QUAT])]


def _assert_unmoved(before: tuple[Any, dict[str, Any]], after: tuple[Any, dict[str, Any]]) -> None:
    """No joint and no object moved between the two ``_sim_state`` snapshots."""
    np.testing.assert_allclose(after[0], before[0], atol=1e-9)
    for name, xyz in before[1].items():
        np.testing.assert_allclose(after[1][name], xyz, atol=1e-6)


def test_a_tier_2_chunk_with_a_bad_second_action_moves_nothing(tmp_path: Path) -> None:
    task, world = _bench_world("stack_blocks_three")
    try:
        planner = _Scripted(_grasp_then_bad_place(world))
        joints, objects = _sim_state(world)
        with TraceWriter(tmp_path / "t") as trace:
            stats = run_planning(task, world, planner, trace)
        joints_after, objects_after = _sim_state(world)
    finally:
        world.close()
    _assert_unmoved((joints, objects), (joints_after, objects_after))
    assert stats.turns == task.max_turns and stats.failed_actions == task.max_turns
    feedback = planner.histories[1][-1].feedback
    assert planner.histories[1][-1].actions == [] and len(feedback) == 1
    assert "refused before its first action: action 2 of 2" in feedback[0] and "norm 0" in feedback[0]
    events = read_events(tmp_path / "t")
    assert not [e for e in events if e["kind"] == "actor_command"]  # no action ran
    assert [e["command"] for e in events if e["kind"] == "safety_refusal"] == ["place_actor"] * task.max_turns


def test_a_tier_3_chunk_with_a_bad_second_action_moves_nothing(tmp_path: Path) -> None:
    task, world = _bench_world("stack_blocks_two")
    try:
        left, right = world.arms["left"].ee_pose(), world.arms["right"].ee_pose()
        stay = [*left.as_list(), 1.0, *right.as_list(), 1.0]
        lower = [*left.position_m[:2], left.position_m[2] - 0.05, *left.quat_wxyz, 1.0, *right.as_list(), 1.0]
        broken = [*left.position_m, *ZERO_QUAT, 1.0, *right.as_list(), 1.0]
        planner = _Scripted([lower, broken, stay])
        joints, _ = _sim_state(world)
        with TraceWriter(tmp_path / "t") as trace:
            stats = run_fine(task, world, planner, trace)
        joints_after, _ = _sim_state(world)
    finally:
        world.close()
    np.testing.assert_allclose(joints_after, joints, atol=1e-9)  # the first, well-formed action did not run
    assert stats.failed_actions == stats.turns >= task.max_turns
    assert "action 2 of 3" in planner.histories[1][-1].feedback[0]


def test_under_the_paper_protocol_a_bad_second_action_moves_nothing_either(tmp_path: Path) -> None:
    """The original's loops run a chunk action by action; mallvi checks the chunk whole first there too."""
    from mallvi.bench.loop_paper import run_fine_paper, run_planning_paper

    task, world = _bench_world("stack_blocks_three")
    try:
        planner = _Scripted(_grasp_then_bad_place(world))
        joints, objects = _sim_state(world)
        with TraceWriter(tmp_path / "t2") as trace:
            stats = run_planning_paper(task, world, planner, trace)
        joints_after, objects_after = _sim_state(world)
    finally:
        world.close()
    _assert_unmoved((joints, objects), (joints_after, objects_after))
    assert stats.failed_actions == task.max_turns
    feedback = planner.histories[1][-1].feedback
    assert len(feedback) == 1 and feedback[0].startswith("Action failed: the plan was refused before its first "
                                                         "action: action 2 of 2")
    events = read_events(tmp_path / "t2")
    assert not [e for e in events if e["kind"] == "actor_command"]
    assert {e["command"] for e in events if e["kind"] == "safety_refusal"} == {"place_actor"}

    task, world = _bench_world("stack_blocks_two")
    try:
        left, right = world.arms["left"].ee_pose(), world.arms["right"].ee_pose()
        lower = [*left.position_m[:2], left.position_m[2] - 0.05, *left.quat_wxyz, 1.0, *right.as_list(), 1.0]
        broken = [*left.position_m, *ZERO_QUAT, 1.0, *right.as_list(), 1.0]
        planner = _Scripted([lower, broken])
        joints, _ = _sim_state(world)
        with TraceWriter(tmp_path / "t3") as trace:
            stats = run_fine_paper(task, world, planner, trace)
        joints_after, _ = _sim_state(world)
    finally:
        world.close()
    np.testing.assert_allclose(joints_after, joints, atol=1e-9)  # the first, well-formed action did not run
    assert stats.failed_actions == stats.turns and "action 2 of 2" in planner.histories[1][-1].feedback[0]
