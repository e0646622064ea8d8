"""SimWorld: the SAPIEN dual-arm tabletop every other part of mallvi runs in.

``SimWorld.create(scene, seed)`` builds the table (top at 0.74 + b, b ~ U[-0.03, 0] drawn first from the seed's
generator), a wall, ground, lights, two arms on pedestals, the cameras, then lets the ``SceneSpec`` add its
objects with the same generator: a world is a pure function of (scene, seed). Frames: world +x robot's right,
+y away, +z up; metres, radians, quaternions [w, x, y, z]. Physics runs at 250 Hz and is only rendered when an
observation is asked for.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import cache
from types import TracebackType
from typing import Any, Self

import mplib
import numpy as np
import sapien
from sapien.wrapper.articulation_builder import ArticulationBuilder

from mallvi.contracts.devices import DualArm
from mallvi.contracts.errors import UnknownObjectError
from mallvi.contracts.geometry import ARM_SIDES, ArmSide, Pose
from mallvi.contracts.observation import Observation
from mallvi.contracts.station import wrist_camera
from mallvi.contracts.world_model import ObjectInfo
from mallvi.robot_drivers.embodiment.loader import Embodiment, default_embodiment
from mallvi.robot_drivers.safety.guard import SafetyConfig, SafetyGuard
from mallvi.sim_bridge import layout
from mallvi.sim_bridge.cameras import CameraSpec, add_fixed_camera, add_mounted_camera, capture
from mallvi.sim_bridge.contingency import FaultInjector, SimFaults
from mallvi.sim_bridge.contingency_profile import ContingencyProfile
from mallvi.sim_bridge.grasp_reach import GraspReach
from mallvi.sim_bridge.grasping import GraspHolder
from mallvi.sim_bridge.motion import Motion
from mallvi.sim_bridge.planning import ArmPlanner, quiet_planner_output
from mallvi.sim_bridge.scene_spec import SceneSpec, SimObject
from mallvi.sim_bridge.sim_devices import SimArm, SimCamera
from mallvi.sim_bridge.sim_skills import SimSkills
from mallvi.sim_bridge.skill_parts import SkillParts
from mallvi.sim_bridge.skill_ports import NO_FAULTS, FaultHooks, Objects, Rig

log = logging.getLogger(__name__)

FIXED_CAMERAS = {
    "head": CameraSpec("head", *layout.HEAD_CAMERA),
    "front": CameraSpec("front", *layout.FRONT_CAMERA),
}


class SimTruth:
    """``WorldModel`` over the simulator's objects: live world-frame poses and functional points."""

    def __init__(self, objects: dict[str, SimObject]) -> None:
        self._objects = objects

    def object_names(self) -> list[str]:
        return sorted(self._objects)

    def get_object(self, name: str) -> ObjectInfo:
        if name not in self._objects:
            raise UnknownObjectError(f"unknown object {name!r}; the scene has {sorted(self._objects)}")
        return self._objects[name].info()


def _static_box(
    scene: sapien.Scene, name: str, half_size: Sequence[float], center: Sequence[float], rgba: Sequence[float]
) -> sapien.Entity:
    b = scene.create_actor_builder()
    b.add_box_collision(half_size=list(half_size))
    b.add_box_visual(half_size=list(half_size), material=sapien.render.RenderMaterial(base_color=list(rgba)))
    b.set_initial_pose(sapien.Pose(p=list(center)))
    return b.build_static(name=name)


class SimWorld:
    """A running simulated episode. Build it with ``SimWorld.create``; close it (or use ``with``) when done."""

    def __init__(self) -> None:  # use SimWorld.create
        self.scene: sapien.Scene
        self.scene_name = ""
        self.seed = 0
        self.table_top_z = layout.TABLE_TOP_NOMINAL_Z_M
        self.objects: dict[str, SimObject] = {}
        self.instruction = ""
        self.metadata: dict[str, Any] = {}
        self.truth = SimTruth(self.objects)
        self.arm_spacing_m = layout.DEFAULT_ARM_SPACING_M
        self.embodiment: Embodiment
        self.arms: dict[ArmSide, SimArm] = {}
        self.planners: dict[ArmSide, ArmPlanner] = {}
        self.guard: SafetyGuard
        self.holder: GraspHolder
        self.skills: SimSkills
        self.grasp_refusal_threshold_m: float | None = 0.1
        self.faults: FaultInjector | None = None
        self._cameras: dict[str, sapien.render.RenderCameraComponent] = {}
        self._render = True
        self._steps = 0
        self._closed = False

    # -- construction ------------------------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        scene: str | SceneSpec,
        seed: int,
        *,
        cameras: Sequence[str] = ("head", "front"),
        wrist_cameras: bool = False,
        render: bool = True,
        embodiment: Embodiment | None = None,
        safety: SafetyConfig | None = None,
        grasp_refusal_threshold_m: float | str | None = "scene",
        contingency: str | ContingencyProfile | None = None,
    ) -> SimWorld:
        """Build the world for ``scene`` (a registered name or a ``SceneSpec``) and ``seed``.

        Args:
            cameras: fixed cameras to add ("head", "front").
            wrist_cameras: also mount a 320×180 camera on each gripper ("left_wrist", "right_wrist").
            render: False builds no cameras at all (physics and skills only; ``observe`` then fails).
            embodiment: the arm description (default: the Piper-kinematics arm).
            safety: guard limits; the table height and joint limits are filled in from the world.
            grasp_refusal_threshold_m: the benchmark's arm-allocation check for ``grasp_actor`` in metres
                (None = off); "scene" takes the scene metadata's ``arm_allocation_threshold_m`` (default 0.1).
            contingency: fault-injection level ("none", "easy", "medium", "hard", "kind=p,...") or a profile;
                faults are drawn per (scene, seed, level), see contingency.py. ContingencySpecError if invalid.
        """
        spec = _resolve_scene(scene)
        faults = FaultInjector.for_episode(contingency, spec.name, int(seed)) if contingency is not None else None
        if isinstance(grasp_refusal_threshold_m, str) and grasp_refusal_threshold_m != "scene":
            raise ValueError(f"grasp_refusal_threshold_m must be metres, None or 'scene': {grasp_refusal_threshold_m}")
        unknown = [c for c in cameras if c not in FIXED_CAMERAS]
        if unknown:
            raise ValueError(f"unknown camera(s) {unknown}; available: {sorted(FIXED_CAMERAS)}")
        w = cls()
        w.scene_name, w.seed, w._render = spec.name, int(seed), render
        w.faults = faults
        w.embodiment = embodiment or default_embodiment()
        w.arm_spacing_m = float(spec.arm_spacing_m)
        rng = np.random.default_rng(seed)
        # mplib's sampling planners (OMPL) and IK restarts draw from a process-global generator: seed it too, so a
        # run's motions depend on (scene, seed) only, not on what this process planned before.
        with quiet_planner_output(stderr=True):  # OMPL warns on stderr that it takes seed 0 as 1
            mplib.set_global_seed(int(seed))
        b = float(rng.uniform(*layout.TABLE_TOP_OFFSET_RANGE_M))
        w.table_top_z = layout.TABLE_TOP_NOMINAL_Z_M + b
        sapien.physx.set_default_material(layout.FRICTION, layout.FRICTION, 0.0)
        w.scene = sapien.Scene()
        w.scene.set_timestep(layout.PHYSICS_DT_S)
        static_boxes = w._build_room()
        w._build_arms(static_boxes)
        if render:
            w._build_cameras(cameras, wrist_cameras)
        contents = spec.build(w.scene, rng, w.table_top_z)
        w.objects.update(contents.objects)
        w.instruction = contents.instruction
        w.metadata = dict(contents.metadata)
        if isinstance(grasp_refusal_threshold_m, str):
            t = w.metadata.get("arm_allocation_threshold_m", 0.1)
            w.grasp_refusal_threshold_m = None if t is None else float(t)
        else:
            w.grasp_refusal_threshold_m = grasp_refusal_threshold_m
        w.holder = GraspHolder(w.scene, w.arms, w.objects)
        joint_limits = {s: tuple(map(tuple, w.planners[s].joint_limits_rad.tolist())) for s in ARM_SIDES}
        cfg = safety or SafetyConfig()
        w.guard = SafetyGuard(cfg)
        w.guard.reconfigure(
            table_top_z_m=w.table_top_z,
            tcp_offset_m=w.embodiment.tcp_offset_m,
            joint_limits_rad=cfg.joint_limits_rad or joint_limits,
        )
        for arm in w.arms.values():
            arm.guard = w.guard
        w.skills = w._build_skills()
        return w

    def _build_skills(self) -> SimSkills:
        """The skills on narrow collaborators: the rig, the object registry, motion, grasp reach, this world as
        the clock, and the episode's faults plugged in (``contingency.SimFaults``) when it injects any."""
        rig = Rig(self.arms, self.embodiment, self.guard, self.holder, self.arm_spacing_m)
        registry = Objects(self.objects, self.truth, self.table_top_z)
        motion = Motion(rig, self.planners, registry, self)
        faults: FaultHooks = NO_FAULTS if self.faults is None else SimFaults(self.faults, rig, registry, motion, self)
        grasping = GraspReach(rig, self.planners, motion, faults)
        parts = SkillParts(rig, registry, motion, grasping, self, faults)
        return SimSkills(parts, self.grasp_refusal_threshold_m)

    def _build_room(self) -> dict[str, tuple[tuple[float, float, float], Pose]]:
        scene = self.scene
        scene.add_ground(altitude=0.0)
        tx, ty, tz = layout.TABLE_SIZE_M
        table_center = (layout.TABLE_CENTER_XY_M[0], layout.TABLE_CENTER_XY_M[1], self.table_top_z - tz / 2)
        self.table = _static_box(scene, "table", (tx / 2, ty / 2, tz / 2), table_center, (0.62, 0.48, 0.35, 1))
        wall_center = (0.0, layout.WALL_Y_M + 0.01, 1.0)
        _static_box(scene, "wall", (1.5, 0.01, 1.0), wall_center, (0.85, 0.85, 0.82, 1))
        boxes: dict[str, tuple[tuple[float, float, float], Pose]] = {
            "table": ((tx, ty, tz), Pose(table_center)),
            "wall": ((3.0, 0.02, 2.0), Pose(wall_center)),
        }
        ped_h = layout.ARM_BASE_Z_M - self.table_top_z
        for side in ARM_SIDES:
            x, y, _ = layout.arm_base_position(side, self.arm_spacing_m)
            center = (x, y, self.table_top_z + ped_h / 2)
            half = layout.PEDESTAL_HALF_WIDTH_M
            _static_box(scene, f"{side}_pedestal", (half, half, ped_h / 2), center, (0.3, 0.3, 0.32, 1))
            boxes[f"{side}_pedestal"] = ((2 * half, 2 * half, ped_h - 0.01), Pose(center))
        scene.set_ambient_light([0.45, 0.45, 0.45])
        scene.add_directional_light([0.3, 0.5, -1.0], [0.9, 0.9, 0.85], shadow=False)
        scene.add_point_light([0.0, -0.2, 2.0], [0.6, 0.6, 0.6], shadow=False)
        return boxes

    def _build_arms(self, static_boxes: dict[str, tuple[tuple[float, float, float], Pose]]) -> None:
        emb = self.embodiment
        quat = layout.arm_base_quat_wxyz()
        bases = {s: Pose(layout.arm_base_position(s, self.arm_spacing_m), quat) for s in ARM_SIDES}
        for side in ARM_SIDES:
            art = _arm_builder(str(emb.urdf_path)).set_scene(self.scene).build()
            art.name = f"{side}_arm"
            art.set_root_pose(sapien.Pose(p=list(bases[side].position_m), q=list(bases[side].quat_wxyz)))
            arm = SimArm(side, art, emb, self.step, layout.PHYSICS_DT_S)
            arm.reset_joints(np.asarray(emb.home_qpos_rad, dtype=float), 1.0)
            self.arms[side] = arm
            other: ArmSide = "right" if side == "left" else "left"
            self.planners[side] = ArmPlanner(emb, side, bases[side], bases[other], static_boxes)
        self.dual_arm = DualArm(self.arms["left"], self.arms["right"])

    def _build_cameras(self, names: Sequence[str], wrist: bool) -> None:
        for name in names:
            self._cameras[name] = add_fixed_camera(self.scene, FIXED_CAMERAS[name])
        if wrist:
            # On the ee link, 6 cm to the side of the gripper, looking along the approach direction (its x).
            mount_pose = sapien.Pose(p=[0.0, 0.0, 0.06])
            for side, arm in self.arms.items():
                self._cameras[wrist_camera(side)] = add_mounted_camera(
                    self.scene, wrist_camera(side), arm.ee_link.entity, mount_pose,
                    layout.WRIST_CAMERA_SIZE, layout.WRIST_CAMERA_FOVY_RAD,
                )  # fmt: skip

    # -- stepping ----------------------------------------------------------------------------------------------
    def step(self, n_steps: int = 1) -> None:
        """Advance physics by ``n_steps`` steps of 1/250 s."""
        for _ in range(int(n_steps)):
            self.scene.step()
        self._steps += int(n_steps)

    def settle(self, max_s: float = 1.0, tol_m_s: float = 2e-3) -> float:
        """Step until every object is (nearly) at rest or ``max_s`` passes; returns the simulated seconds used."""
        chunk = 10
        used = 0
        limit = int(max_s / layout.PHYSICS_DT_S)
        while used < limit:
            self.step(chunk)
            used += chunk
            if all(_speed(o) < tol_m_s for o in self.objects.values()):
                break
        return used * layout.PHYSICS_DT_S

    @property
    def sim_time_s(self) -> float:
        return self._steps * layout.PHYSICS_DT_S

    # -- observation -------------------------------------------------------------------------------------------
    @property
    def camera_names(self) -> list[str]:
        return list(self._cameras)

    def camera(self, name: str) -> SimCamera:
        """The ``Camera`` contract for one of this world's cameras."""
        if name not in self._cameras:
            raise KeyError(f"no camera {name!r}; this world has {self.camera_names}")
        return SimCamera(name, self.observe)

    def observe(self, camera: str = "head") -> Observation:
        """Render one camera now: rgb, depth (m), actor segmentation with object names, K, T_world_cam (OpenCV)."""
        if camera not in self._cameras:
            raise KeyError(f"no camera {camera!r}; this world has {self.camera_names}")
        self.scene.update_render()
        names = {o.seg_id: name for name, o in self.objects.items()}
        return capture(self._cameras[camera], camera, self.sim_time_s, names, seg_points=self.object_points())

    def render_all(self) -> dict[str, Observation]:
        """Every camera's observation, rendered from one scene update."""
        self.scene.update_render()
        names = {o.seg_id: name for name, o in self.objects.items()}
        points = self.object_points()
        return {n: capture(c, n, self.sim_time_s, names, seg_points=points) for n, c in self._cameras.items()}

    def object_points(self) -> dict[str, dict[str, tuple[float, ...]]]:
        """Every object's named points in the world frame now, ``[x, y, z, qw, qx, qy, qz]`` (simulator truth)."""
        out: dict[str, dict[str, tuple[float, ...]]] = {}
        for name, o in self.objects.items():
            info = o.info()
            out[name] = {k: tuple(float(v) for v in (*p.position_m, *p.quat_wxyz)) for k, p in info.points.items()}
            out[name]["origin"] = tuple(float(v) for v in (*info.pose.position_m, *info.pose.quat_wxyz))
        return out

    @property
    def injected_faults(self) -> list[dict[str, Any]]:
        """Faults injected so far in this episode (kind, skill, object, sim_time_s); empty without contingency."""
        return list(self.faults.log) if self.faults is not None else []

    # -- grasp state -------------------------------------------------------------------------------------------
    def gripper_opening(self, arm: ArmSide) -> float:
        """The commanded gripper opening of ``arm`` (0 closed .. 1 open), as the benchmark checks it."""
        return self.arms[arm].gripper_opening()

    def grasped_object(self, arm: ArmSide) -> str | None:
        """The object ``arm`` holds (verified between its fingers when grasped), or None."""
        return self.holder.held_by(arm)

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._cameras.clear()
        self.objects.clear()
        for e in list(self.scene.entities):
            self.scene.remove_entity(e)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


@cache
def _arm_builder(urdf_path: str) -> ArticulationBuilder:
    """The arm's articulation builder (root fixed), parsed from its URDF once per process and built into each
    episode's scene: parsing took ~30 ms of every arm of every episode, and a builder is only a description."""
    loader = sapien.Scene().create_urdf_loader()
    loader.fix_root_link = True
    builders, actors, cameras = loader.parse(urdf_path)
    if len(builders) != 1 or actors or cameras:
        raise ValueError(f"{urdf_path} must describe one articulation and nothing else")
    builder: ArticulationBuilder = builders[0]
    return builder


def _speed(obj: SimObject) -> float:
    body = obj.entity.find_component_by_type(sapien.physx.PhysxRigidDynamicComponent)
    if body is None:
        return 0.0
    return float(np.linalg.norm(body.linear_velocity))


def _resolve_scene(scene: str | SceneSpec) -> SceneSpec:
    if isinstance(scene, SceneSpec):
        return scene
    try:
        from mallvi.sim_bridge.scenes import get_scene
    except ImportError as e:  # the registry module is not there
        raise ValueError(f"no scene registry available to look up {scene!r}: {e}") from e
    return get_scene(scene)
