"""The contract between scene definitions and the simulated world.

A *scene* is a pure function of ``(name, seed)``: ``SceneSpec.build`` receives a SAPIEN scene whose table, arms,
lights and cameras already exist, a seeded random generator and the table-top height, and adds the scene's
objects. ``SimWorld`` (world.py) owns everything else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sapien

from mallvi.contracts.geometry import Pose
from mallvi.contracts.world_model import ObjectInfo

CUBE_TOL_M = 0.002


class SceneSetupError(RuntimeError):
    """A scene cannot be set up for this seed (e.g. its objects cannot be placed); the benchmark skips the seed."""


@dataclass
class SimObject:
    """One simulated object: its SAPIEN entity plus what agents and skills need to know about it.

    Attributes:
        name: unique id in the scene, e.g. "red_block" (also the name skills accept).
        label: category, e.g. "block", "bowl", "mug".
        entity: the SAPIEN entity (dynamic or static).
        size_m: axis-aligned extent of the object in its own frame (x, y, z), metres.
        color: a colour word ("red", ...) or None.
        local_points: named functional/contact points in the object frame ("top", "bottom", "handle", ...).
            Indexed points follow the benchmark: "fp0" = bottom centre, "fp1" = top centre (z pointing down)
            for boxes; "cp0".."cpN" = contact (grasp) points.
        category: the grasp category of MALLVi A.8: "block", "round", "rimmed" or "irregular".
    """

    name: str
    label: str
    entity: sapien.Entity
    size_m: tuple[float, float, float]
    color: str | None = None
    local_points: dict[str, sapien.Pose] = field(default_factory=dict)
    category: str = "block"

    @property
    def pose(self) -> sapien.Pose:
        return self.entity.get_pose()

    @property
    def is_cube(self) -> bool:
        """A block whose three sides are equal (within 2 mm): any face down is the same solid in the same place."""
        return self.category == "block" and float(np.ptp(np.asarray(self.size_m, dtype=float))) < CUBE_TOL_M

    def box_center_local(self) -> sapien.Pose:
        """The centre of its box in its own frame (the "bbox_center" point, else half its height up)."""
        return self.local_points.get("bbox_center", sapien.Pose([0.0, 0.0, float(self.size_m[2]) / 2]))

    def corners_world(self) -> np.ndarray:
        """The 8 corners (8×3, world frame, metres) of its box where it is now."""
        half = 0.5 * np.asarray(self.size_m, dtype=float)
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
        T = (self.entity.get_pose() * self.box_center_local()).to_transformation_matrix()
        return np.asarray(T[:3, 3] + (signs * half) @ T[:3, :3].T, dtype=float)

    def distance_to_m(self, point_world: np.ndarray) -> float:
        """Distance from a world point to its box (0 inside)."""
        T = (self.entity.get_pose() * self.box_center_local()).to_transformation_matrix()
        local = T[:3, :3].T @ (np.asarray(point_world, dtype=float) - T[:3, 3])
        return float(np.linalg.norm(np.maximum(np.abs(local) - 0.5 * np.asarray(self.size_m, dtype=float), 0.0)))

    def frame_pose(self) -> sapien.Pose:
        """The pose its points are read in: the body's pose, except that a cube lying on another face is given
        the symmetric frame whose z axis is closest to world up (so fp0 is the face it stands on and its top
        grasps point down again), turned about its centre."""
        pose = self.entity.get_pose()
        if not self.is_cube:
            return pose
        T = pose.to_transformation_matrix()
        R = T[:3, :3]
        k = int(np.argmax(np.abs(R[2, :])))
        if k == 2 and R[2, 2] > 0:
            return pose
        z_local = np.sign(R[2, k]) * np.eye(3)[k]
        x_local = np.eye(3)[0] if k != 0 else np.eye(3)[1]
        S = np.column_stack([x_local, np.cross(z_local, x_local), z_local])
        centre_local = np.array([0.0, 0.0, self.size_m[2] / 2])
        if "bbox_center" in self.local_points:
            centre_local = np.asarray(self.local_points["bbox_center"].p, dtype=float)
        T_new = np.eye(4)
        T_new[:3, :3] = R @ S
        T_new[:3, 3] = T[:3, 3] + R @ centre_local - T_new[:3, :3] @ centre_local
        return sapien.Pose(T_new)

    @property
    def seg_id(self) -> int:
        """The id this object has in the actor-level segmentation channel (``seg[..., 1]`` of SAPIEN 3 cameras)."""
        return int(self.entity.per_scene_id)

    def point_world(self, point: str) -> sapien.Pose:
        """A named point's pose in the world frame; KeyError names the points that exist."""
        if point not in self.local_points:
            raise KeyError(f"{self.name} has no point {point!r}; it has {sorted(self.local_points)}")
        return self.frame_pose() * self.local_points[point]

    def info(self) -> ObjectInfo:
        """Simulator truth for this object, in the world frame (a cube's frame as ``frame_pose`` gives it)."""
        p = self.frame_pose()
        points = {}
        for key, local in self.local_points.items():
            w = p * local
            points[key] = Pose.from_arrays(w.p, w.q)
        return ObjectInfo(
            name=self.name,
            label=self.label,
            pose=Pose.from_arrays(p.p, p.q),
            size_m=self.size_m,
            color=self.color,
            points=points,
        )


@dataclass
class SceneContents:
    """What a scene builder added: its objects, the default instruction and free-form metadata for tasks."""

    objects: dict[str, SimObject]
    instruction: str
    metadata: dict[str, Any] = field(default_factory=dict)


SceneBuilder = Callable[[sapien.Scene, np.random.Generator, float], SceneContents]


@dataclass(frozen=True)
class SceneSpec:
    """A registered scene: its name, the arm spacing it asks for, and the builder that adds its objects.

    ``build(scene, rng, table_top_z)`` must draw every random choice from ``rng`` so that a scene is a
    pure function of (name, seed).
    """

    name: str
    build: SceneBuilder
    arm_spacing_m: float = 0.7
    description: str = ""
    tags: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
