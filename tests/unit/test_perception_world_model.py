"""The scene graph as a WorldModel: names resolve to perceived poses, sizes and functional points."""

from __future__ import annotations

import numpy as np
import pytest

from mallvi.contracts.errors import UnknownObjectError
from mallvi.contracts.world_model import WorldModel
from mallvi.perception.perceived_world import PerceptionWorldModel
from mallvi.perception.pipeline import make_perception
from mallvi.perception.synthetic import SynthBox, head_camera, render

K, T_WORLD_CAM = head_camera()
BOXES = [
    SynthBox("red_block", (-0.12, 0.0, 0.765), (0.05, 0.05, 0.05), "red", 0.35),
    SynthBox("blue_block", (0.10, 0.03, 0.76), (0.08, 0.04, 0.04), "blue", 0.3),  # elongated: yaw is defined
]


def _yaw_of(q: tuple[float, float, float, float]) -> float:
    w, _, _, z = q
    return 2.0 * np.arctan2(z, w)


def _axis_diff(a: float, b: float, period: float) -> float:
    return abs((a - b + period / 2) % period - period / 2)


@pytest.mark.parametrize("mode", ["color", "sim"])
def test_perceived_objects_resolve_like_simulator_objects(mode: str) -> None:
    obs = render(BOXES, K, T_WORLD_CAM, 640, 360)
    wm = PerceptionWorldModel(perception=make_perception(mode))
    assert isinstance(wm, WorldModel)
    wm.refresh(obs)
    assert wm.object_names() == ["blue_block", "red_block"]
    for box in BOXES:
        info = wm.get_object(box.name)
        assert info.label == "block" and info.color == box.color
        assert np.linalg.norm(info.pose.p - box.center_world) < 0.004
        assert sorted(info.size_m[:2]) == pytest.approx(sorted(box.size_m[:2]), abs=0.005)
        assert info.size_m[2] == pytest.approx(box.size_m[2], abs=0.004)
        yaw = _yaw_of(info.pose.quat_wxyz)
        if box.size_m[0] != box.size_m[1]:
            # the object's x axis runs along its long side: yaw matches the box's modulo pi
            along = yaw if info.size_m[0] > info.size_m[1] else yaw - np.pi / 2
            assert _axis_diff(along, box.yaw_rad, np.pi) < np.deg2rad(4)
        else:
            assert _axis_diff(yaw, box.yaw_rad, np.pi / 2) < np.deg2rad(4)
        top_z = box.center_world[2] + box.size_m[2] / 2
        assert info.points["top"].position_m[2] == pytest.approx(top_z, abs=0.002)
        assert info.points["fp0"].position_m[2] == pytest.approx(box.center_world[2] - box.size_m[2] / 2, abs=0.003)
        # fp1: z axis pointing down
        assert (info.points["fp1"].as_matrix()[:3, 2] @ [0, 0, 1]) == pytest.approx(-1.0)


def test_unknown_names_and_missing_parts_are_clear_errors() -> None:
    wm = PerceptionWorldModel()
    with pytest.raises(UnknownObjectError, match="unknown object 'green_block'; perception sees \\[\\]"):
        wm.get_object("green_block")
    with pytest.raises(ValueError, match="needs the Perception"):
        wm.refresh()
    with pytest.raises(ValueError, match="needs a camera"):
        PerceptionWorldModel(perception=make_perception("color")).refresh()
