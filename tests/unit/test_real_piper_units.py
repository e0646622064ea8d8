"""Unit conversions between mallvi (m, rad) and piper_sdk integers (0.001 mm, 0.001°), and config validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from mallvi.robot_drivers.piper.config_piper import PiperConfig
from mallvi.robot_drivers.piper.piper_units import (
    T_base_flange_from_sdk,
    T_base_flange_to_sdk,
    T_flange_ee,
    gripper_opening_to_sdk_um,
    joints_to_sdk,
    metres_to_sdk_um,
    radians_to_sdk_mdeg,
)


def test_known_values() -> None:
    assert metres_to_sdk_um(0.1) == 100_000
    assert radians_to_sdk_mdeg(math.pi / 2) == 90_000
    assert gripper_opening_to_sdk_um(1.0, 0.07) == 70_000
    assert gripper_opening_to_sdk_um(7.0, 0.07) == 70_000  # clamped
    assert joints_to_sdk([0.0, math.pi, -math.pi / 4, 0, 0, 0]) == (0, 180_000, -45_000, 0, 0, 0)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_values_are_rejected(bad: float) -> None:
    with pytest.raises(ValueError, match="not finite"):
        metres_to_sdk_um(bad)
    with pytest.raises(ValueError, match="not finite"):
        radians_to_sdk_mdeg(bad)


@given(
    st.lists(st.floats(-0.6, 0.6), min_size=3, max_size=3),
    st.lists(st.floats(-170.0, 170.0), min_size=3, max_size=3),
)
def test_end_pose_round_trip(xyz: list[float], rpy_deg: list[float]) -> None:
    T = np.eye(4)
    T[:3, :3] = Rotation.from_euler("xyz", [rpy_deg[0], rpy_deg[1] / 2, rpy_deg[2]], degrees=True).as_matrix()
    T[:3, 3] = xyz
    back = T_base_flange_from_sdk(T_base_flange_to_sdk(T))
    assert np.allclose(back[:3, 3], T[:3, 3], atol=1e-6)
    assert np.allclose(back[:3, :3], T[:3, :3], atol=1e-4)


def test_tool_frame_is_a_rotation_with_approach_along_x() -> None:
    T = T_flange_ee(0.01)
    assert np.isclose(np.linalg.det(T[:3, :3]), 1.0)
    assert np.allclose(T[:3, 0], [0, 0, 1])  # ee x = flange z (approach)
    assert np.allclose(T[:3, 1], [0, 1, 0])  # ee y = flange y (finger opening), as the simulator's ee_link


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"speed_percent": 0}, "speed_percent"),
        ({"bus_type": "pcan-ish"}, "bus_type"),
        ({"can_name": " "}, "can_name"),
        ({"home_joints_rad": (0.0, -1.0, 0.0, 0.0, 0.0, 0.0)}, "home joint 2"),
        ({"feedback_timeout_s": float("nan")}, "feedback_timeout_s"),
    ],
)
def test_config_rejects_bad_values(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"side": "left", "can_name": "can_left", **kwargs}
    with pytest.raises(ValueError, match=message):
        PiperConfig(**args)  # type: ignore[arg-type]
