"""Synthetic RGB-D observations with exact geometry: coloured boxes on a table plane, ray-cast in numpy.

Used to test perception without a simulator and to imitate a real camera (lighting gain, depth noise and
holes, no segmentation). Boxes may be yawed about +z; depth is exact z-depth along the optical axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.observation import Observation
from mallvi.perception.projection import k_inverse

#: nominal RGB of each colour word (what a diffusely lit face of that colour looks like)
RGB_OF_COLOR: dict[str, tuple[int, int, int]] = {
    "red": (200, 30, 30), "green": (40, 170, 60), "blue": (30, 60, 200), "yellow": (220, 200, 40),
    "cyan": (25, 175, 185), "orange": (230, 120, 30), "purple": (130, 50, 170), "pink": (235, 120, 180),
    "black": (25, 25, 28), "white": (235, 235, 235),
}


@dataclass(frozen=True)
class SynthBox:
    """An axis-aligned (then yawed) box: centre (m), full size (m), yaw about +z (rad), colour word."""

    name: str
    center_world: tuple[float, float, float]
    size_m: tuple[float, float, float]
    color: str
    yaw_rad: float = 0.0


def look_at(eye_world: Sequence[float], forward_world: Sequence[float]) -> NDArray[np.float64]:
    """T_world_cam of an OpenCV camera at ``eye_world`` looking along ``forward_world`` (world +z up)."""
    f = np.asarray(forward_world, dtype=float)
    f /= np.linalg.norm(f)
    x = np.cross(f, [0.0, 0.0, 1.0])
    x /= np.linalg.norm(x)
    y = np.cross(f, x)
    T = np.eye(4)
    T[:3, 0], T[:3, 1], T[:3, 2], T[:3, 3] = x, y, f, np.asarray(eye_world, dtype=float)
    return T


def intrinsics(width: int, height: int, vfov_deg: float) -> NDArray[np.float64]:
    """A pinhole K with square pixels and the principal point at the image centre."""
    fy = 0.5 * height / np.tan(np.deg2rad(vfov_deg) / 2.0)
    return np.array([[fy, 0.0, width / 2.0], [0.0, fy, height / 2.0], [0.0, 0.0, 1.0]])


def head_camera(width: int = 640, height: int = 360) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """K and T_world_cam of ST-BiBench's head camera (eye (-0.032, -0.45, 1.35), looking along (0, 0.6, -0.8))."""
    return intrinsics(width, height, 45.0), look_at((-0.032, -0.45, 1.35), (0.0, 0.6, -0.8))


def render(
    boxes: Sequence[SynthBox],
    K: NDArray[np.float64],
    T_world_cam: NDArray[np.float64],
    width: int,
    height: int,
    table_z: float = 0.74,
    table_rgb: tuple[int, int, int] = (150, 120, 90),
    with_seg: bool = True,
    camera: str = "head",
) -> Observation:
    """Ray-cast the boxes and the table plane (z = ``table_z``, |x| <= 0.6, -0.35 <= y <= 0.35).

    Faces are shaded by a fixed light from above-front; the seg image gives box i the id i + 1.
    """
    u, v = np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5)
    pix = np.stack([u, v, np.ones_like(u)], axis=-1).reshape(-1, 3)
    dirs_cam = pix @ k_inverse(K).T  # z component = 1, so ray parameter t = z-depth
    R, o = T_world_cam[:3, :3], T_world_cam[:3, 3]
    dirs = dirs_cam @ R.T
    n = dirs.shape[0]
    best_t = np.full(n, np.inf)
    normal = np.zeros((n, 3))
    ident = np.zeros(n, dtype=np.int32)
    rgb = np.zeros((n, 3))

    # table plane
    with np.errstate(divide="ignore", invalid="ignore"):
        t_tab = (table_z - o[2]) / dirs[:, 2]
    hit = t_tab > 0
    pts = o + dirs * np.where(hit, t_tab, 0.0)[:, None]
    hit &= (np.abs(pts[:, 0]) <= 0.6) & (pts[:, 1] >= -0.35) & (pts[:, 1] <= 0.35)
    best_t[hit] = t_tab[hit]
    normal[hit] = (0.0, 0.0, 1.0)
    rgb[hit] = table_rgb

    for i, box in enumerate(boxes):
        c, s = np.cos(box.yaw_rad), np.sin(box.yaw_rad)
        R_wb = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        o_b = R_wb.T @ (o - np.asarray(box.center_world))
        d_b = dirs @ R_wb  # rows: R_wb.T @ d
        half = np.asarray(box.size_m) / 2.0
        with np.errstate(divide="ignore", invalid="ignore"):
            t1 = (-half - o_b) / d_b
            t2 = (half - o_b) / d_b
        tmin = np.nanmax(np.minimum(t1, t2), axis=1)
        tmax = np.nanmin(np.maximum(t1, t2), axis=1)
        hit = (tmax >= tmin) & (tmin > 0) & (tmin < best_t)
        if not hit.any():
            continue
        axis = np.argmax(np.minimum(t1, t2)[hit], axis=1)
        sign = -np.sign(d_b[hit, axis])
        n_b = np.zeros((int(hit.sum()), 3))
        n_b[np.arange(n_b.shape[0]), axis] = sign
        best_t[hit] = tmin[hit]
        normal[hit] = n_b @ R_wb.T
        ident[hit] = i + 1
        rgb[hit] = RGB_OF_COLOR[box.color]

    light = np.array([0.2, -0.5, 1.0])
    light /= np.linalg.norm(light)
    shade = 0.6 + 0.4 * np.clip(normal @ light, 0.0, 1.0)
    img = np.clip(rgb * shade[:, None], 0, 255).astype(np.uint8).reshape(height, width, 3)
    background = ~np.isfinite(best_t)
    img.reshape(-1, 3)[background] = (60, 60, 70)
    depth = np.where(background, 0.0, best_t).astype(np.float32).reshape(height, width)
    seg = ident.reshape(height, width) if with_seg else None
    names = {i + 1: b.name for i, b in enumerate(boxes)} if with_seg else {}
    return Observation(
        rgb=img, depth_m=depth, K=K.copy(), T_world_cam=T_world_cam.copy(), camera=camera, stamp=0.0,
        seg=seg, seg_names=names,
    )


def degrade(
    obs: Observation,
    rng: np.random.Generator,
    gain: float = 0.8,
    depth_noise_m: float = 0.002,
    hole_fraction: float = 0.03,
    pixel_noise: float = 4.0,
) -> Observation:
    """A real-camera-like copy: no segmentation, brightness gain + sensor noise, depth noise and holes."""
    rgb = obs.rgb.astype(np.float64) * gain + rng.normal(0.0, pixel_noise, obs.rgb.shape)
    depth = obs.depth_m + rng.normal(0.0, depth_noise_m, obs.depth_m.shape).astype(np.float32)
    holes = rng.random(obs.depth_m.shape) < hole_fraction
    depth = np.where(holes | (obs.depth_m <= 0), 0.0, depth).astype(np.float32)
    return Observation(
        rgb=np.clip(rgb, 0, 255).astype(np.uint8), depth_m=depth, K=obs.K.copy(), T_world_cam=obs.T_world_cam.copy(),
        camera="realsense", stamp=obs.stamp,
    )


def random_blocks(
    rng: np.random.Generator,
    colors: Sequence[str] = ("red", "green", "blue"),
    table_z: float = 0.74,
    half_size_m: tuple[float, float] = (0.015, 0.025),
    min_gap_m: float = 0.1,
) -> list[SynthBox]:
    """Cubes of the given colours on the table at random yaw, |x| <= 0.28, y in [-0.12, 0.10], centres apart."""
    boxes: list[SynthBox] = []
    for color in colors:
        for _ in range(200):
            half = float(rng.uniform(*half_size_m))
            xy = (float(rng.uniform(-0.28, 0.28)), float(rng.uniform(-0.12, 0.10)))
            if all(np.hypot(xy[0] - b.center_world[0], xy[1] - b.center_world[1]) >= min_gap_m for b in boxes):
                boxes.append(SynthBox(
                    f"{color}_block", (xy[0], xy[1], table_z + half), (2 * half,) * 3, color,
                    float(rng.uniform(-np.pi / 4, np.pi / 4)),
                ))
                break
        else:
            raise ValueError(f"could not place the {color} block {min_gap_m} m from the others")
    return boxes
