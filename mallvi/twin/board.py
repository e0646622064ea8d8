"""A ChArUco board on a bracket at a twin arm's wrist, for calibrating the twin's camera as a rig's is calibrated.

The board is a textured quad (render only, no collision) whose pose follows the simulated end-effector link
before every render. Its printed face looks along ``-z`` of the board frame (OpenCV's ChArUco frame: origin at
the first corner, x along the squares_x squares, y along squares_y). The bracket holds it beside the gripper,
turned 45° back from the finger-opening direction, so a top-down wrist shows it to a camera behind the arms.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import cv2
import numpy as np
import sapien
from numpy.typing import NDArray

from mallvi.contracts.geometry import ArmSide, Pose
from mallvi.robot_drivers.calibration.eye_to_hand import BoardSpec
from mallvi.robot_drivers.embodiment.piper_dh import EE_OFFSET_M
from mallvi.robot_drivers.piper.piper_units import T_flange_ee
from mallvi.sim_bridge.world import SimWorld

PX_PER_M = 4000.0
MARGIN_M = 0.01


def bracket_T_ee_board(spec: BoardSpec, centre_in_ee_m: tuple[float, float, float] = (0.06, -0.10, 0.0)
                       ) -> NDArray[np.float64]:
    """The board frame in the end-effector frame: face normal (-z) at (-sin45°, -cos45°, 0), centred at
    ``centre_in_ee_m``."""
    c, s = math.cos(math.pi / 4), math.sin(math.pi / 4)
    z_b = np.array([s, c, 0.0])
    x_b = np.array([0.0, 0.0, 1.0])
    y_b = np.cross(z_b, x_b)
    w_m, h_m = spec.size_m
    T = np.eye(4)
    T[:3, :3] = np.column_stack([x_b, y_b, z_b])
    T[:3, 3] = np.asarray(centre_in_ee_m) - w_m / 2 * x_b - h_m / 2 * y_b
    return T


class FlangeBoard:
    """A rendered ChArUco board held by ``side``'s wrist; call ``follow()`` before rendering (the twin camera's
    ``before_render`` hook does), ``remove()`` when done."""

    def __init__(self, world: SimWorld, side: ArmSide, spec: BoardSpec) -> None:
        self.world, self.side, self.spec = world, side, spec
        self.T_ee_board = bracket_T_ee_board(spec)
        self.T_flange_board_true = T_flange_ee(EE_OFFSET_M) @ self.T_ee_board
        w_m, h_m = spec.size_m
        margin_px = round(MARGIN_M * PX_PER_M)
        image = spec.board().generateImage((round(w_m * PX_PER_M) + 2 * margin_px,
                                            round(h_m * PX_PER_M) + 2 * margin_px), marginSize=margin_px)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "board.png"
            cv2.imwrite(str(path), cv2.cvtColor(image, cv2.COLOR_GRAY2BGR))
            texture = sapien.render.RenderTexture2D(str(path))
        material = sapien.render.RenderMaterial(base_color=[1.0, 1.0, 1.0, 1.0], roughness=0.9)
        material.base_color_texture = texture
        lo_x, lo_y, hi_x, hi_y = -MARGIN_M, -MARGIN_M, w_m + MARGIN_M, h_m + MARGIN_M
        vertices = np.array([[lo_x, lo_y, 0], [hi_x, lo_y, 0], [hi_x, hi_y, 0], [lo_x, hi_y, 0]], np.float32)
        uvs = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
        normals = np.tile(np.array([[0.0, 0.0, -1.0]], np.float32), (4, 1))
        triangles = np.array([[0, 1, 2], [0, 2, 3], [0, 2, 1], [0, 3, 2]], np.uint32)  # seen from both sides
        body = sapien.render.RenderBodyComponent()
        body.attach(sapien.render.RenderShapeTriangleMesh(vertices, triangles, normals, uvs, material))
        self.entity = sapien.Entity()
        self.entity.name = f"{side}_calibration_board"
        self.entity.add_component(body)
        world.scene.add_entity(self.entity)
        self.follow()

    def follow(self) -> None:
        T = self.world.arms[self.side].ee_pose().as_matrix() @ self.T_ee_board
        p = Pose.from_matrix(T)
        self.entity.set_pose(sapien.Pose(p=list(p.position_m), q=list(p.quat_wxyz)))

    def remove(self) -> None:
        self.world.scene.remove_entity(self.entity)
