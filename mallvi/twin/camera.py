"""The twin's RealSense: SAPIEN renders of a D435-like camera, through a pyrealsense2 software device.

Two SAPIEN cameras stand where a D435's colour imager and its (left-imager) depth origin are, 15 mm apart. Every
read renders both at the current simulated state, gives the depth the sensor's behaviour (``twin_depth``; a pixel's
shininess comes from the render material of the body the depth imager sees there) and
pushes the pair into ``SyntheticRealSense``: z16 depth in 1 mm units and rgb8 colour, with the depth-to-colour
extrinsics registered, so ``RealSenseCamera`` aligns depth to colour with librealsense's ``align`` as on a rig.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sapien
from numpy.typing import NDArray

from mallvi.robot_drivers.realsense.realsense_synthetic import SyntheticRealSense
from mallvi.sim_bridge import layout
from mallvi.sim_bridge.cameras import CameraSpec, T_world_cam_cv, add_fixed_camera, capture, look_pose
from mallvi.sim_bridge.world import SimWorld
from mallvi.twin.depth_noise import StereoDepthModel


@dataclass(frozen=True)
class D435Spec:
    """Where the twin's camera stands and what it sees (colour imager position and viewing direction, metres)."""

    position_m: tuple[float, float, float] = layout.HEAD_CAMERA[0]
    look_dir: tuple[float, float, float] = layout.HEAD_CAMERA[1]
    size_px: tuple[int, int] = (640, 480)
    color_fovy_rad: float = math.radians(42.0)
    depth_fovy_rad: float = math.radians(58.0)
    depth_offset_m: float = 0.015  # the depth origin lies this far to the colour imager's left
    fps: int = 30
    depth: StereoDepthModel = field(default_factory=StereoDepthModel)


def material_shininess(material: sapien.render.RenderMaterial) -> float:
    """0 (matte) .. 1 (mirror): metal, or a surface smoother than roughness 0.3, reflects the stereo pattern."""
    glossy = (0.3 - float(material.roughness)) / 0.3
    return float(np.clip(max(float(material.metallic), glossy), 0.0, 1.0))


def body_shininess(entity: sapien.Entity) -> float:
    """The shiniest material among an entity's rendered shapes (0 when it renders nothing)."""
    values = [0.0]
    for component in entity.components:
        if isinstance(component, sapien.render.RenderBodyComponent):
            for shape in component.render_shapes:
                values.extend(material_shininess(part.material) for part in shape.parts)
    return max(values)


class TwinRealSenseSource:
    """A frame source for ``RealSenseCamera``: each wait renders and pushes a fresh pair, then hands it over."""

    def __init__(self, world: SimWorld, spec: D435Spec | None = None, noise_seed: int = 0) -> None:
        self.world = world
        self.spec = spec or D435Spec()
        s = self.spec
        pose = look_pose(s.position_m, s.look_dir)
        left = pose.to_transformation_matrix()[:3, 1]
        dx, dy, dz = (float(v) for v in np.asarray(s.position_m) + s.depth_offset_m * left)
        depth_pos = (dx, dy, dz)
        self._color = add_fixed_camera(world.scene, CameraSpec("twin_color", s.position_m, s.look_dir, s.size_px,
                                                               s.color_fovy_rad))
        self._depth = add_fixed_camera(world.scene, CameraSpec("twin_depth", depth_pos, s.look_dir, s.size_px,
                                                               s.depth_fovy_rad))
        self.K_color = np.asarray(self._color.get_intrinsic_matrix(), dtype=float)
        self.K_depth = np.asarray(self._depth.get_intrinsic_matrix(), dtype=float)
        self.T_world_color = T_world_cam_cv(self._color)
        T_world_depth = T_world_cam_cv(self._depth)
        self.T_color_depth = np.linalg.inv(self.T_world_color) @ T_world_depth
        w, h = s.size_px
        self.device = SyntheticRealSense(w, h, self.K_color, self.K_depth, self.T_color_depth, fps=s.fps)
        self._rng = np.random.default_rng([int(world.seed), int(noise_seed)])
        self._frame = 0
        self.before_render: list[Callable[[], None]] = []  # e.g. a calibration board following a flange

    def render_pair(self) -> tuple[NDArray[np.uint8], NDArray[np.float32]]:
        """Render colour and the sensor's depth (metres, 0 = hole) at the current simulated state."""
        for hook in self.before_render:
            hook()
        self.world.scene.update_render()
        color = capture(self._color, "twin_color", self.world.sim_time_s, {}, with_seg=False)
        depth_view = capture(self._depth, "twin_depth", self.world.sim_time_s, {}, with_seg=True)
        assert depth_view.seg is not None
        depth = self.spec.depth.apply(depth_view.depth_m, depth_view.rgb, float(self.K_depth[0, 0]), self._rng,
                                      self.shininess_image(depth_view.seg))
        return color.rgb, depth

    def shininess_image(self, seg: NDArray[np.int32]) -> NDArray[np.float32]:
        """Per-pixel shininess from the per-body segmentation and each body's render materials (read every frame:
        materials may change)."""
        ids = {int(i) for i in np.unique(seg)}
        lut = np.zeros(max(ids) + 1, np.float32)
        for entity in self.world.scene.entities:
            i = int(entity.per_scene_id)
            if i in ids:
                lut[i] = body_shininess(entity)
        return lut[seg]

    # ---- what RealSenseCamera calls -------------------------------------------------------------------------
    def poll_for_frames(self) -> Any:
        """Drop anything queued from earlier pushes: the newest frame is the one the next wait renders."""
        while self.device.syncer.poll_for_frames():
            pass
        return None

    def try_wait_for_frames(self, timeout_ms: int) -> tuple[bool, Any]:
        rgb, depth = self.render_pair()
        self._frame += 1
        self.device.push(rgb, depth, self._frame, 1000.0 / self.spec.fps * self._frame)
        ok, fs = self.device.syncer.try_wait_for_frames(timeout_ms)
        while ok and fs.size() < 2:  # the primer pair or a single frame: wait for the pair just pushed
            ok, fs = self.device.syncer.try_wait_for_frames(timeout_ms)
        while True:
            later = self.device.syncer.poll_for_frames()
            if not later:
                return ok, fs
            fs = later

    def close(self) -> None:
        self.device.close()
