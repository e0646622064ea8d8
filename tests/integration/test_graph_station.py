"""Every run is the graph on a Station: the simulator and the emulated rig (two Piper emulators on python-can's
virtual bus, a synthetic RealSense) assemble contexts with the same fields; on the rig an idle arm is parked before
a retry; and a block the rig perceives resolves to the same named points as that block in the simulator."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mallvi.config import Budgets, RunConfig
from mallvi.contracts.geometry import ARM_SIDES
from mallvi.contracts.observation import Observation
from mallvi.contracts.world_model import ObjectInfo
from mallvi.graph.assemble import build_context
from mallvi.graph.backends.rules import rules_backends
from mallvi.graph.context import GraphContext
from mallvi.graph.perception_adapter import PipelinePort
from mallvi.orchestration.run_instruction import run
from mallvi.orchestration.stations import RigAccess, RunRequest
from mallvi.perception.pipeline import make_perception
from mallvi.perception.synthetic import SynthBox, head_camera, render
from mallvi.robot_drivers.calibration.calibration_files import (
    ArmCalibration,
    RigCalibration,
    mount_matrix,
    save_rig_calibration,
)
from mallvi.robot_drivers.calibration.eye_to_hand import BoardSpec
from mallvi.robot_drivers.piper.piper_emulator import PiperEmulator
from mallvi.robot_drivers.realsense.config_realsense import RealSenseConfig
from mallvi.robot_drivers.realsense.realsense_synthetic import SyntheticRealSense
from mallvi.robot_drivers.rig.config_rig import RigConfig
from mallvi.robot_drivers.rig.rig_station import RigStation
from mallvi.robot_drivers.rig_skills.rig_skills import RigSkillsConfig
from mallvi.sim_bridge.sim_station import SimStation
from mallvi.sim_bridge.world import SimWorld
from tests.fixtures.realsense_stream import streaming

W, H = 640, 360
K, T_WORLD_CAM = head_camera(W, H)  # the rig's camera stands where the simulator's head camera does
RIG_TABLE_Z = 0.75
RED_BLOCK = SynthBox("red_block", (-0.2, 0.0, RIG_TABLE_Z + 0.025), (0.05, 0.05, 0.05), "red", 0.3)


def _calibration(path: Path) -> Path:
    arms = {side: ArmCalibration(mount_matrix(x, -0.30, 0.95, 90.0), np.eye(4), np.eye(4), 10, 0.5, 1.0, 0.1, 0.2)
            for side, x in (("left", -0.30), ("right", 0.30))}
    return save_rig_calibration(path, RigCalibration(T_WORLD_CAM, K, np.zeros(5), W, H, arms, BoardSpec()))


def _feed(frame: Observation) -> Iterator[SyntheticRealSense]:
    """A synthetic RealSense streaming ``frame`` at ~30 Hz."""
    yield from streaming(W, H, K, frame.rgb, frame.depth_m)


@pytest.fixture
def red_block_feed() -> Iterator[SyntheticRealSense]:
    yield from _feed(render([RED_BLOCK], K, T_WORLD_CAM, W, H, table_z=RIG_TABLE_Z))


def _rig_overrides(tag: str) -> dict[str, Any]:
    return {"can_left": f"st_left_{tag}", "can_right": f"st_right_{tag}", "bus_type": "virtual",
            "camera": RealSenseConfig(timeout_s=2.0, width=W, height=H), "use_depth_cloud": False,
            "table_top_z_m": RIG_TABLE_Z, "skills": RigSkillsConfig(ee_speed_m_s=0.4, step_m=0.02)}


def _with_emulators(tag: str, body: Callable[[], Any], left_width_m: float | None = 0.03) -> Any:
    emus = [PiperEmulator(f"st_left_{tag}", object_width_m=left_width_m).start(),
            PiperEmulator(f"st_right_{tag}", object_width_m=0.03).start()]
    try:
        return body()
    finally:
        for e in emus:
            e.close()


def _present(ctx: GraphContext) -> set[str]:
    return {f.name for f in fields(ctx) if getattr(ctx, f.name) is not None}


def test_the_sim_and_the_rig_assemble_contexts_with_the_same_fields(
        tmp_path: Path, red_block_feed: SyntheticRealSense) -> None:
    port = PipelinePort(make_perception("color"))
    with SimWorld.create("stack_blocks_two", 3) as world:
        sim = build_context(SimStation(world, "head"), port, rules_backends())
        sim_fields = _present(sim)
        sim_obs = sim.observe()
        sim_state = {a: (sim.gripper_holding(a), sim.gripper_opening(a)) for a in ARM_SIDES}  # type: ignore[misc]
    tag = uuid.uuid4().hex[:6]

    def on_rig() -> tuple[set[str], GraphContext, Observation, dict[str, Any]]:
        cfg = RigConfig(str(_calibration(tmp_path / "rig.yaml")), **_rig_overrides(tag))
        with RigStation.connect(cfg, port.world_model(), camera_source=red_block_feed.syncer) as station:
            ctx = build_context(station, port, rules_backends())
            state = {a: (ctx.gripper_holding(a), ctx.gripper_opening(a)) for a in ARM_SIDES}  # type: ignore[misc]
            return _present(ctx), ctx, ctx.observe(), state

    rig_fields, rig, rig_obs, rig_state = _with_emulators(tag, on_rig)
    assert sim_fields == rig_fields  # gripper sensing, workspace, reach, world model, views: on both
    assert {"gripper_holding", "workspace_m", "world", "reach", "extra_views"} <= rig_fields
    assert sim.extra_views.keys() == {"front"} and rig.extra_views == {}  # the rig has one camera
    assert sim_obs.rgb.shape[2] == 3 and rig_obs.rgb.shape == (H, W, 3)
    for state in (sim_state, rig_state):
        assert all(held is False and 0.0 <= opening <= 1.0 for held, opening in state.values()), state
    # reach: the rig's centre line lies between its mounts (x = 0 here), so a block 4 cm past it is in reach of both
    for ctx in (sim, rig):
        assert ctx.reach["left"].reaches(0.04, 0.0) and ctx.reach["right"].reaches(-0.04, 0.0)
        assert not ctx.reach["left"].reaches(0.30, 0.0)
    assert sim.privileged and "objects resolved from simulator truth" in sim.privileged
    assert rig.privileged == () and rig.station == "piper rig" and sim.station == "sim"


def test_on_the_emulated_rig_idle_arms_are_parked_before_a_retry(
        tmp_path: Path, red_block_feed: SyntheticRealSense) -> None:
    tag = uuid.uuid4().hex[:6]
    cfg = RunConfig(robot="piper", camera="realsense", budgets=Budgets(max_attempts_per_subtask=2))
    trace = tmp_path / "trace"

    def run_on_rig() -> Any:  # the left gripper closes on nothing: the grasp fails and is retried
        request = RunRequest(instruction="pick up the red block", calibration=_calibration(tmp_path / "rig.yaml"),
                             trace_dir=trace)
        return run(request, cfg, rig=RigAccess(overrides=_rig_overrides(tag), camera_source=red_block_feed.syncer))

    result = _with_emulators(tag, run_on_rig, left_width_m=None)
    assert result.status == "failed" and result.privileged == []
    events = [json.loads(line) for line in (trace / "events.jsonl").read_text().splitlines()]
    start = next(e for e in events if e["kind"] == "run_start")
    assert start["station"] == "piper rig" and start["privileged"] == []
    commands = [(e["skill"], e["arm"], e["args"], e["ok"]) for e in events if e["kind"] == "actor_command"]
    grasps = [i for i, c in enumerate(commands) if c[0] == "grasp_actor"]
    assert len(grasps) == 2 and not commands[grasps[0]][3], commands
    between = commands[grasps[0] + 1:grasps[1]]
    parked = {arm for skill, arm, args, ok in between if skill == "back_to_origin" and args.get("park") and ok}
    assert parked == {"left", "right"}, between  # the idle right arm too, which the failed attempt never moved


def _points(info: ObjectInfo) -> dict[str, np.ndarray]:
    return {k: p.p for k, p in info.points.items()}


def test_a_block_perceived_on_the_emulated_rig_has_the_simulators_named_points(tmp_path: Path) -> None:
    with SimWorld.create("stack_blocks_two", 3, render=False) as world:
        world.settle()
        truth = world.truth.get_object("red_block")
    yaw = 2.0 * float(np.arctan2(truth.pose.quat_wxyz[3], truth.pose.quat_wxyz[0]))
    centre = truth.points["center"].position_m
    block = SynthBox("red_block", centre, truth.size_m, "red", yaw)
    frame = render([block], K, T_WORLD_CAM, W, H, table_z=centre[2] - truth.size_m[2] / 2)
    feed = _feed(frame)
    dev = next(feed)
    tag = uuid.uuid4().hex[:6]
    port = PipelinePort(make_perception("color"))

    def perceive() -> ObjectInfo:
        overrides = {**_rig_overrides(tag), "table_top_z_m": float(world.table_top_z)}
        cfg = RigConfig(str(_calibration(tmp_path / "rig.yaml")), **overrides)
        with RigStation.connect(cfg, port.world_model(), camera_source=dev.syncer) as station:
            port.scan(station.cameras[station.main_camera].read())
            return station.world.get_object("red_block")

    try:
        seen = _with_emulators(tag, perceive)
    finally:
        next(feed, None)
    sim_points, rig_points = _points(truth), _points(seen)
    assert rig_points.keys() == sim_points.keys()  # center, bbox_center, top, bottom, fp0, fp1, cp0..cp3
    for name, p in sim_points.items():
        assert np.linalg.norm(rig_points[name] - p) < 0.01, (name, rig_points[name], p)
    for k in range(4):  # the contact points are top-down grasps in both
        assert seen.points[f"cp{k}"].as_matrix()[:3, 0] @ truth.points[f"cp{k}"].as_matrix()[:3, 0] > 0.99
    assert seen.points["fp1"].as_matrix()[:3, 2] @ [0, 0, 1] == pytest.approx(-1.0)
