"""Building blocks for primitive objects: a shape collector and the helpers that make named points.

Conventions used by every object in this package:
- The object frame's origin is the object's bottom centre, z up; an object resting on a surface at height h has
  ``pose.p[2] == h``. So "fp0" (bottom centre) is the identity and "fp1" (top centre) sits at the object's height
  with quaternion [0, 1, 0, 0] (z pointing down).
- "bbox_center" is the centre of the object's bounding box (extent ``size_m``) in its own frame; it differs from
  (0, 0, height/2) only for lopsided objects (mug, skillet, rack).
- A contact point ("cp0".."cpN") is a grasp frame in the object frame: its position is where the fingers close,
  its x-axis is the approach direction (pointing into the object) and its y-axis the finger-opening direction —
  the benchmark's end-effector convention, so ``grasp_pose = object_pose * cp`` (the EE itself sits 0.12 m behind).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import sapien

from mallvi.sim_bridge.objects.palette import RGB
from mallvi.sim_bridge.scene_spec import SimObject

Vec3 = Sequence[float]
QuatWXYZ = tuple[float, float, float, float]

IDENTITY_Q: QuatWXYZ = (1.0, 0.0, 0.0, 0.0)
Z_DOWN_Q: QuatWXYZ = (0.0, 1.0, 0.0, 0.0)
_S = math.sqrt(0.5)
# SAPIEN cylinders and capsules lie along their local x axis; these turn that axis onto y or z.
X_TO_Z_Q: QuatWXYZ = (_S, 0.0, -_S, 0.0)
X_TO_Y_Q: QuatWXYZ = (_S, 0.0, 0.0, _S)
_AXIS_Q: dict[str, QuatWXYZ] = {"x": IDENTITY_Q, "y": X_TO_Y_Q, "z": X_TO_Z_Q}

FRICTION = 0.5
#: a rolling object's cylinder (``Parts.rolling_cylinder``) collides as a convex prism of this many sides...
PRISM_SIDES = 16
#: ...and its body's angular damping (1/s) stands in for rolling resistance (stronger than a real one's)
ROLLING_DAMPING_PER_S = 5.0


def yaw_quat(yaw_rad: float) -> QuatWXYZ:
    """Rotation about world z as a quaternion [w, x, y, z]."""
    return (math.cos(yaw_rad / 2), 0.0, 0.0, math.sin(yaw_rad / 2))


def _frame(x_axis: Vec3, y_axis: Vec3, position: Vec3) -> sapien.Pose:
    x = np.asarray(x_axis, dtype=float)
    y = np.asarray(y_axis, dtype=float)
    x /= np.linalg.norm(x)
    y /= np.linalg.norm(y)
    T = np.eye(4)
    T[:3, 0], T[:3, 1], T[:3, 2] = x, y, np.cross(x, y)
    T[:3, 3] = position
    return sapien.Pose(T)


def top_grasp(center: Vec3, yaw_rad: float = 0.0) -> sapien.Pose:
    """A top-down grasp frame at ``center``: approach straight down, fingers opening along ``yaw_rad``."""
    return _frame((0.0, 0.0, -1.0), (math.cos(yaw_rad), math.sin(yaw_rad), 0.0), center)


def side_grasp(center: Vec3, approach_yaw_rad: float) -> sapien.Pose:
    """A horizontal grasp frame at ``center``: approach along ``approach_yaw_rad`` (0 = moving towards +x),
    fingers opening horizontally."""
    c, s = math.cos(approach_yaw_rad), math.sin(approach_yaw_rad)
    return _frame((c, s, 0.0), (-s, c, 0.0), center)


def angled_grasp(center: Vec3, approach_yaw_rad: float, pitch_rad: float) -> sapien.Pose:
    """A grasp frame at ``center`` approaching along ``approach_yaw_rad`` and tilted ``pitch_rad`` downwards
    (0 = horizontal, π/2 = straight down), fingers opening horizontally across the approach."""
    c, s = math.cos(approach_yaw_rad), math.sin(approach_yaw_rad)
    cp, sp = math.cos(pitch_rad), math.sin(pitch_rad)
    return _frame((cp * c, cp * s, -sp), (-s, c, 0.0), center)


def fp_points(height_m: float) -> dict[str, sapien.Pose]:
    """The benchmark's functional points of an upright object: fp0 bottom centre, fp1 top centre (z down)."""
    return {"fp0": sapien.Pose(), "fp1": sapien.Pose([0.0, 0.0, height_m], list(Z_DOWN_Q))}


def numbered(prefix: str, poses: Sequence[sapien.Pose], start: int = 0) -> dict[str, sapien.Pose]:
    """{"cp0": poses[0], "cp1": poses[1], ...}."""
    return {f"{prefix}{start + i}": p for i, p in enumerate(poses)}


class Parts:
    """Collects primitive shapes (each a collision shape plus a matching visual) and builds one SAPIEN entity.

    All shapes share one physical material (friction 0.5, no restitution) and, unless given, one density.
    """

    def __init__(self, scene: sapien.Scene, *, density_kg_m3: float = 500.0, friction: float = FRICTION) -> None:
        self._builder = scene.create_actor_builder()
        self._material = sapien.physx.PhysxMaterial(friction, friction, 0.0)
        self._density = density_kg_m3
        self._convex: list[tuple[np.ndarray, sapien.Pose, float]] = []  # (vertices, local pose, density)
        self._angular_damping_per_s: float | None = None

    def _material_for(self, rgb: RGB) -> sapien.render.RenderMaterial:
        return sapien.render.RenderMaterial(base_color=[*rgb, 1.0], roughness=0.7, metallic=0.0)

    def box(
        self,
        center: Vec3,
        half_size: Vec3,
        rgb: RGB,
        *,
        quat: QuatWXYZ = IDENTITY_Q,
        collide: bool = True,
        density_kg_m3: float | None = None,
    ) -> Parts:
        pose = sapien.Pose(list(center), list(quat))
        if collide:
            self._builder.add_box_collision(
                pose, half_size=list(half_size), material=self._material, density=density_kg_m3 or self._density
            )
        self._builder.add_box_visual(pose, half_size=list(half_size), material=self._material_for(rgb))
        return self

    def cylinder(
        self,
        center: Vec3,
        radius_m: float,
        half_length_m: float,
        rgb: RGB,
        *,
        axis: str = "z",
        quat: QuatWXYZ | None = None,
        density_kg_m3: float | None = None,
    ) -> Parts:
        pose = sapien.Pose(list(center), list(quat or _AXIS_Q[axis]))
        self._builder.add_cylinder_collision(
            pose, radius=radius_m, half_length=half_length_m, material=self._material,
            density=density_kg_m3 or self._density,
        )
        self._builder.add_cylinder_visual(
            pose, radius=radius_m, half_length=half_length_m, material=self._material_for(rgb)
        )
        return self

    def rolling_cylinder(
        self, center: Vec3, radius_m: float, half_length_m: float, rgb: RGB, *, axis: str = "x",
        density_kg_m3: float | None = None,
    ) -> Parts:
        """A cylinder that may roll on its side (a roller; a can or a bottle knocked over). It looks round; it
        collides as a convex prism of ``PRISM_SIDES`` sides, and the body resists rolling
        (``ROLLING_DAMPING_PER_S``). PhysX's analytic cylinder (and a finer prism) speeds up as it rolls on a level
        table, 5 cm/s becoming 14 cm/s within two seconds, and rolls on until it falls off; this one slows down
        and stops within a few seconds, sooner than a real one would."""
        self._angular_damping_per_s = ROLLING_DAMPING_PER_S
        pose = sapien.Pose(list(center), list(_AXIS_Q[axis]))
        angles = np.linspace(0.0, 2 * math.pi, PRISM_SIDES, endpoint=False)
        ring = radius_m * np.stack([np.cos(angles), np.sin(angles)], axis=1)
        ends = [np.column_stack([np.full(PRISM_SIDES, x), ring]) for x in (-half_length_m, half_length_m)]
        self._convex.append((np.concatenate(ends).astype(np.float32), pose, density_kg_m3 or self._density))
        self._builder.add_cylinder_visual(
            pose, radius=radius_m, half_length=half_length_m, material=self._material_for(rgb)
        )
        return self

    def capsule(
        self, center: Vec3, radius_m: float, half_length_m: float, rgb: RGB, *, axis: str = "x",
        density_kg_m3: float | None = None,
    ) -> Parts:
        pose = sapien.Pose(list(center), list(_AXIS_Q[axis]))
        self._builder.add_capsule_collision(
            pose, radius=radius_m, half_length=half_length_m, material=self._material,
            density=density_kg_m3 or self._density,
        )
        self._builder.add_capsule_visual(
            pose, radius=radius_m, half_length=half_length_m, material=self._material_for(rgb)
        )
        return self

    def sphere(self, center: Vec3, radius_m: float, rgb: RGB, *, density_kg_m3: float | None = None) -> Parts:
        pose = sapien.Pose(list(center))
        self._builder.add_sphere_collision(
            pose, radius=radius_m, material=self._material, density=density_kg_m3 or self._density
        )
        self._builder.add_sphere_visual(pose, radius=radius_m, material=self._material_for(rgb))
        return self

    def ring(
        self, z_bottom_m: float, height_m: float, r_bottom_m: float, r_top_m: float, thickness_m: float, rgb: RGB,
        *, segments: int = 16,
    ) -> Parts:
        """A (possibly flared) wall of ``segments`` boxes around the z axis, from ``z_bottom_m`` up ``height_m``."""
        r_mid = 0.5 * (r_bottom_m + r_top_m)
        flare_rad = math.atan2(r_top_m - r_bottom_m, height_m)
        # A tilted box spans slant·cos + thickness·sin vertically: size it to span exactly [z_bottom, z_bottom+height].
        slant_m = (height_m - thickness_m * abs(math.sin(flare_rad))) / math.cos(flare_rad)
        # Neighbouring segments meet on the wall's mid-surface, so the ring has no gaps to leak through.
        half_width = r_mid * math.tan(math.pi / segments)
        q_tilt = np.array([math.cos(flare_rad / 2), 0.0, math.sin(flare_rad / 2), 0.0])
        for i in range(segments):
            phi = 2 * math.pi * i / segments
            # Orientation: yaw to phi, then tilt outwards about the segment's tangent axis.
            q = _qmul(np.array(yaw_quat(phi)), q_tilt)
            center = (r_mid * math.cos(phi), r_mid * math.sin(phi), z_bottom_m + 0.5 * height_m)
            self.box(center, (0.5 * thickness_m, half_width, 0.5 * slant_m), rgb,
                     quat=(float(q[0]), float(q[1]), float(q[2]), float(q[3])))
        return self

    def build(self, name: str, pose: sapien.Pose, *, static: bool = False) -> sapien.Entity:
        self._builder.set_initial_pose(pose)
        self._builder.set_physx_body_type("static" if static else "dynamic")
        if not self._convex:
            entity: sapien.Entity = self._builder.build(name)
            return entity
        self._builder.set_name(name)
        entity = self._builder.build_entity()
        body = entity.find_component_by_type(sapien.physx.PhysxRigidBaseComponent)
        for vertices, local_pose, density in self._convex:
            shape = sapien.physx.PhysxCollisionShapeConvexMesh(vertices, np.ones(3, dtype=np.float32), self._material)
            shape.local_pose = local_pose
            shape.set_collision_groups(self._builder.collision_groups)
            shape.set_density(density)
            body.attach(shape)
        if self._angular_damping_per_s is not None and isinstance(body, sapien.physx.PhysxRigidDynamicComponent):
            body.set_angular_damping(self._angular_damping_per_s)
        entity.name = name
        entity.pose = pose
        self._builder.scene.add_entity(entity)
        return entity


def _qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    ])


def finish(
    parts: Parts,
    name: str,
    pose: sapien.Pose,
    *,
    label: str,
    category: str,
    size_m: Vec3,
    color: str | None,
    points: dict[str, sapien.Pose],
    static: bool,
    bbox_center: Vec3 | None = None,
) -> SimObject:
    """Build the entity and wrap it in a SimObject.

    ``size_m`` is the extent of the object's bounding box in its own frame and ``bbox_center`` that box's centre
    (default: straight above the origin at half the height); fp0/fp1, "bbox_center", "top" and "bottom" are added to
    the points.
    """
    entity = parts.build(name, pose, static=static)
    all_points = fp_points(float(size_m[2]))
    all_points["bbox_center"] = sapien.Pose(list(bbox_center) if bbox_center is not None else [0, 0, size_m[2] / 2])
    all_points["top"] = sapien.Pose([0.0, 0.0, float(size_m[2])])  # top and bottom centre in the object's frame,
    all_points["bottom"] = sapien.Pose()  # as a perceived box has them (an object's own "top" replaces this one)
    all_points.update(points)
    return SimObject(
        name=name,
        label=label,
        entity=entity,
        size_m=(float(size_m[0]), float(size_m[1]), float(size_m[2])),
        color=color,
        local_points=all_points,
        category=category,
    )
