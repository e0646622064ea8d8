"""SAPIEN cameras that yield ``Observation`` frames (rgb, depth in metres, actor segmentation, K, T_world_cam).

SAPIEN's camera frame is x forward, y left, z up; ``Observation`` uses the OpenCV optical frame (x right, y down,
z forward). ``K`` and ``T_world_cam`` come from SAPIEN's own OpenCV-convention intrinsic/extrinsic matrices.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import sapien
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.contracts.observation import Observation

NEAR_M = 0.02
FAR_M = 10.0


@dataclass(frozen=True)
class CameraSpec:
    """A fixed camera: position (m), viewing direction, image size (w, h) and vertical field of view (rad)."""

    name: str
    position_m: tuple[float, float, float]
    look_dir: tuple[float, float, float]
    size_px: tuple[int, int]
    fovy_rad: float


def look_pose(position_m: Sequence[float], look_dir: Sequence[float]) -> sapien.Pose:
    """SAPIEN camera pose (x forward, y left, z up) at ``position_m`` looking along ``look_dir``."""
    fwd = np.asarray(look_dir, dtype=float)
    fwd /= np.linalg.norm(fwd)
    left = np.cross([0.0, 0.0, 1.0], fwd)
    if np.linalg.norm(left) < 1e-6:  # looking straight up/down: pick world -x as "left"
        left = np.array([-1.0, 0.0, 0.0])
    left /= np.linalg.norm(left)
    up = np.cross(fwd, left)
    x, y, z, w = Rotation.from_matrix(np.stack([fwd, left, up], axis=1)).as_quat()
    return sapien.Pose(p=np.asarray(position_m, dtype=np.float32), q=[w, x, y, z])


@cache
def _unused_brdf_lut() -> sapien.render.RenderTexture:
    """A 1×1 stand-in for SAPIEN's BRDF lookup table (one per process)."""
    return sapien.render.RenderTexture(np.zeros((1, 1, 4), dtype=np.float32), 2, "R32G32B32A32Sfloat",
                                       address_mode="edge")  # fmt: skip


def skip_brdf_lut(scene: sapien.Scene, cam: sapien.render.RenderCameraComponent) -> None:
    """Give ``cam`` a stand-in BRDF lookup table when the scene has no environment map.

    SAPIEN's default shader reads the table only for the specular light of the environment map, which it multiplies
    by the map's colour; without a map that colour is black, so the table's values cannot change a pixel. Left
    unset, SAPIEN computes a 512×512 table on the process's first picture: about 6.5 s of CPU on lavapipe. (A map
    set after the cameras are added would need SAPIEN's table; no mallvi scene sets one.)
    """
    if scene.render_system.get_cubemap() is None:
        cam.set_texture("BRDFLUT", _unused_brdf_lut())


def add_fixed_camera(scene: sapien.Scene, spec: CameraSpec) -> sapien.render.RenderCameraComponent:
    w, h = spec.size_px
    cam = scene.add_camera(spec.name, w, h, spec.fovy_rad, NEAR_M, FAR_M)
    cam.entity.set_pose(look_pose(spec.position_m, spec.look_dir))
    skip_brdf_lut(scene, cam)
    return cam


def add_mounted_camera(
    scene: sapien.Scene,
    name: str,
    mount: sapien.Entity,
    pose_in_mount: sapien.Pose,
    size_px: tuple[int, int],
    fovy_rad: float,
) -> sapien.render.RenderCameraComponent:
    """A camera that moves with ``mount`` (e.g. a wrist camera on a gripper link)."""
    w, h = size_px
    cam = sapien.render.RenderCameraComponent(w, h)
    cam.set_fovy(fovy_rad, compute_x=True)
    cam.near, cam.far = NEAR_M, FAR_M
    cam.local_pose = pose_in_mount
    cam.name = name
    mount.add_component(cam)
    skip_brdf_lut(scene, cam)
    return cam


def T_world_cam_cv(cam: sapien.render.RenderCameraComponent) -> NDArray[np.float64]:
    """4×4 pose of the camera's OpenCV optical frame in the world frame."""
    T_cam_world = np.eye(4)
    T_cam_world[:3, :] = np.asarray(cam.get_extrinsic_matrix(), dtype=np.float64)
    return np.linalg.inv(T_cam_world)


def capture(
    cam: sapien.render.RenderCameraComponent,
    name: str,
    stamp_s: float,
    seg_names: Mapping[int, str],
    with_seg: bool = True,
    seg_filter: Callable[[NDArray[np.int32]], NDArray[np.int32]] | None = None,
    seg_points: Mapping[str, Mapping[str, tuple[float, ...]]] | None = None,
) -> Observation:
    """Take a picture (the scene's render state must be updated) and convert it into an ``Observation``."""
    cam.take_picture()
    rgba = np.asarray(cam.get_picture("Color"))
    rgb = (np.clip(rgba[..., :3], 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)
    pos = np.asarray(cam.get_picture("Position"))  # OpenGL camera frame; w = depth-buffer value (1 = nothing)
    depth_m = (-pos[..., 2]).astype(np.float32)
    depth_m[pos[..., 3] >= 1.0] = 0.0
    seg: NDArray[np.int32] | None = None
    if with_seg:
        seg = np.asarray(cam.get_picture("Segmentation"))[..., 1].astype(np.int32)
        if seg_filter is not None:
            seg = seg_filter(seg)
    return Observation(
        rgb=rgb,
        depth_m=depth_m,
        K=np.asarray(cam.get_intrinsic_matrix(), dtype=np.float64),
        T_world_cam=T_world_cam_cv(cam),
        camera=name,
        stamp=stamp_s,
        seg=seg,
        seg_names=dict(seg_names),
        seg_points=dict(seg_points or {}) if with_seg else {},
    )
