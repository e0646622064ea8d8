"""The Tier 3 expert's reachability checks agree with what the executor then does.

Each test builds one scene without rendering and checks one mechanism: the check sees the other arm where it
stands now, the early-stopping IK answers as the executor's IK does, and a carry with a turned wrist puts the
object's bottom centre on its target.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mallvi.bench.agents.expert_ctx import ExpertContext
from mallvi.bench.agents.expert_fine import PAN_GRASPS, Hands
from mallvi.bench.episode import seed_global_rngs
from mallvi.bench.tasks import get_task
from mallvi.bench.tasks.task_base import point
from mallvi.contracts.geometry import Pose
from mallvi.sim_bridge.world import SimWorld
from mallvi.tracing.trace import TraceWriter


def _hands(task_name: str, seed: int, tmp_path: Path) -> tuple[Hands, Any]:
    task = get_task(task_name)
    seed_global_rngs(seed)
    world = SimWorld.create(task.scene_spec(), seed, render=False)
    return Hands(ExpertContext(task, world, TraceWriter(tmp_path), budget=100)), world


def _top_down(tcp_m: float, grasp_xyz: list[float], yaw_rad: float) -> list[float]:
    """EE pose [x, y, z, qw, qx, qy, qz] that puts the grasp centre at ``grasp_xyz``, fingers along ``yaw_rad``."""
    x = np.array([0.0, 0.0, -1.0])
    y = np.array([np.cos(yaw_rad), np.sin(yaw_rad), 0.0])
    T = np.eye(4)
    T[:3, :3] = np.column_stack([x, y, np.cross(x, y)])
    T[:3, 3] = np.asarray(grasp_xyz) - tcp_m * x
    return Pose.from_matrix(T).as_list()


def test_reachability_sees_the_other_arm_where_it_stands_now(tmp_path: Path) -> None:
    """After the right arm has been over the stack spot and gone home, the left arm can reach that spot (the
    check once saw the right arm where it was one action earlier and refused)."""
    h, world = _hands("stack_blocks_two", 300002, tmp_path)
    z = world.table_top_z + 0.15
    above_stack = _top_down(h.tcp_m, [0.0, -0.13, z], np.pi / 2)
    assert h.reachable("left", above_stack)
    h.pose["right"] = _top_down(h.tcp_m, [0.02, -0.13, z], -np.pi / 2)
    assert h.send()
    assert not h.reachable("left", above_stack), "the right arm stands there: the left arm must not reach it"
    h.pose["right"] = h.home["right"]
    assert h.send()
    assert h.reachable("left", above_stack)


def test_early_stopping_ik_answers_as_the_executors_ik(tmp_path: Path) -> None:
    h, world = _hands("stack_blocks_two", 300002, tmp_path)
    planner, q = world.planners["left"], world.arms["left"].joint_positions_rad()
    world.skills.motion.sync_planner("left", with_objects=False)
    z = world.table_top_z + 0.1
    poses = [
        _top_down(h.tcp_m, [-0.15, -0.05, z], np.pi / 2),  # in front of the left arm
        _top_down(h.tcp_m, [0.0, -0.13, z], 0.0),
        _top_down(h.tcp_m, [0.45, 0.05, z], 0.0),  # far beyond the left arm's reach
        _top_down(h.tcp_m, [-0.15, -0.05, world.table_top_z - 0.2], 0.0),  # below the table
    ]
    answers = []
    for p in poses:
        pose = Pose.from_arrays(p[:3], p[3:])
        answers.append(planner.has_ik(pose, q))
        assert answers[-1] == (planner.ik(pose, q)[0] is not None)
    assert answers[0] and not answers[2] and not answers[3]


@pytest.mark.parametrize("seed", [300002, 300007])
def test_a_carry_with_a_turned_wrist_puts_the_pan_on_its_target(seed: int, tmp_path: Path) -> None:
    """The skillet, held by its handle or its wall, lands with its centre on the target whatever turn the wrist
    makes on the way (turning about the grasp swings the pan round)."""
    h, world = _hands("place_bread_skillet_ee", seed, tmp_path)
    arm = "left" if float(world.objects["skillet"].pose.p[0]) < 0 else "right"
    target = np.array([0.03 if arm == "left" else -0.03, -0.10, world.table_top_z])
    poses = h.plan_pick(arm, "skillet", target, PAN_GRASPS)
    assert poses is not None, "the expert found no way to carry the skillet to the middle"
    grasp, at = (Pose.from_arrays(p[:3], p[3:]).as_matrix() for p in (poses[1], poses[4]))
    T_pan = np.asarray(world.objects["skillet"].pose.to_transformation_matrix())
    bottom = (at @ np.linalg.inv(grasp) @ T_pan)[:3, 3]  # the pan moves rigidly with the hand
    assert np.hypot(*(bottom[:2] - target[:2])) < 1e-6
    assert 0.0 < bottom[2] - target[2] < 0.05  # let go just above the table
    centre = point(world, "skillet", "center")
    assert abs(float(centre[2]) - world.table_top_z) < 0.02  # the scene still stands: nothing moved yet
