"""SafetyGuard: every unsafe command is refused with a reason, never executed and never raised."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mallvi.contracts.geometry import Pose
from mallvi.robot_drivers.safety.guard import SafetyConfig, SafetyGuard
from mallvi.sim_bridge.layout import top_down_quat_wxyz

DOWN = top_down_quat_wxyz(math.pi / 2)


@pytest.fixture()
def guard() -> SafetyGuard:
    limits = ((-2.6, 2.6), (0.0, 3.14), (-2.9, 0.0), (-1.7, 1.7), (-1.2, 1.2), (-2.0, 2.0))
    return SafetyGuard(SafetyConfig(table_top_z_m=0.74, joint_limits_rad={"left": limits, "right": limits}))


def test_a_reachable_pose_above_the_table_passes(guard: SafetyGuard) -> None:
    assert guard.check_pose("left", Pose((-0.25, -0.05, 0.90), DOWN)) is None


def test_nan_and_inf_are_refused(guard: SafetyGuard) -> None:
    assert "NaN" in (guard.check_pose("left", Pose((float("nan"), 0.0, 1.0), DOWN)) or "")
    assert "NaN" in (guard.check_values("action", [0.0, math.inf]) or "")
    assert guard.check_gripper("left", float("nan")) is not None
    assert guard.check_gripper("left", 1.5) is not None and guard.check_gripper("left", 0.3) is None


def test_table_plane_applies_to_the_grasp_centre(guard: SafetyGuard) -> None:
    # The EE is 0.12 m behind the grasp centre: an EE at 0.85 pointing down puts the fingers at 0.73 < 0.744.
    why = guard.check_pose("right", Pose((0.25, -0.05, 0.85), DOWN))
    assert why is not None and "below the table" in why
    # The same EE height pointing horizontally keeps the grasp centre above the table.
    assert guard.check_pose("right", Pose((0.25, -0.05, 0.85), (1.0, 0.0, 0.0, 0.0))) is None


def test_workspace_box_is_per_arm(guard: SafetyGuard) -> None:
    far_right = Pose((0.6, -0.05, 1.0), DOWN)
    assert guard.check_pose("right", far_right) is None
    why = guard.check_pose("left", far_right)
    assert why is not None and "left arm's workspace" in why


def test_step_limits_per_command() -> None:
    g = SafetyGuard(SafetyConfig(max_step_m=0.2, max_step_rad=1.0))
    here = Pose((-0.3, -0.1, 1.0), DOWN)
    assert g.check_pose("left", Pose((-0.2, -0.1, 1.0), DOWN), current=here) is None
    assert "exceeds the limit" in (g.check_pose("left", Pose((0.0, -0.1, 1.0), DOWN), current=here) or "")
    turned = Pose((-0.3, -0.1, 1.0), top_down_quat_wxyz(math.pi / 2 + 1.5))
    assert "rotation" in (g.check_pose("left", turned, current=here) or "")


def test_joint_paths_checked_for_limits_jumps_and_nan(guard: SafetyGuard) -> None:
    ok = np.linspace([0.0, 1.0, -1.0, 0.0, 0.5, 0.0], [0.2, 1.2, -0.8, 0.1, 0.6, 0.1], 10)
    assert guard.check_joint_path("left", ok, 0.02) is None
    jump = ok.copy()
    jump[5, 0] += 1.0
    assert "jumps" in (guard.check_joint_path("left", jump, 0.02) or "")
    out = ok.copy()
    out[:, 1] = -0.5
    assert "joint 2" in (guard.check_joint_path("left", out, 0.02) or "")
    bad = ok.copy()
    bad[3, 3] = np.nan
    assert guard.check_joint_path("left", bad, 0.02) is not None
    assert guard.check_joint_path("left", ok, 0.0) is not None


def test_config_is_validated() -> None:
    with pytest.raises(ValueError, match="min < max"):
        SafetyConfig(workspace_m={"left": ((0, 0, 0), (-1, 1, 1)), "right": ((0, 0, 0), (1, 1, 1))})
    with pytest.raises(ValueError, match="max_step_m"):
        SafetyConfig(max_step_m=-1.0)
    with pytest.raises(ValueError, match="finite"):
        SafetyConfig(table_top_z_m=math.nan)
    g = SafetyGuard()
    g.reconfigure(table_top_z_m=0.73)
    assert g.config.table_top_z_m == 0.73
    with pytest.raises(ValueError):
        g.reconfigure(tcp_offset_m=-0.1)


def test_a_planner_runtime_error_becomes_a_failed_plan() -> None:
    """mplib raises RuntimeError("Fail to parameterize path") from time parameterisation; the skill must see a
    failed plan with the reason, not an exception."""
    from mallvi.sim_bridge.planning import ArmPlanner

    def explode(*_args: object, **_kwargs: object) -> dict[str, object]:
        raise RuntimeError("Fail to parameterize path")

    raw = ArmPlanner._guarded_call(explode, 1, x=2)
    assert raw == {"status": "planner error: Fail to parameterize path"}
