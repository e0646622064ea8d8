"""Fault injection for the simulated skills (DualTHOR-style contingencies), driven by a ``ContingencyProfile``.

Each grasp and each place draws one fault (or none) from the episode's generator ``fault_rng(scene, seed, level)``,
so an episode's faults are reproducible. The faults act physically on the SAPIEN scene:

- ``grasp_miss``: just before the fingers close, the object is pushed out from between them; the fingers close
  on nothing and ``grasp_actor`` reports the failure, as a real gripper would.
- ``grasp_slip``: after a verified grasp and lift the object slips out and falls; the skill still says success.
- ``place_off``: the object is put down 4–8 cm from the asked target (random direction); success is reported.
- ``knock_over``: after the place the object is knocked onto its side; success is reported.

Every injected fault is appended to ``FaultInjector.log`` (kind, skill, object, simulated time).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sapien
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.sim_bridge.contingency_profile import ContingencyProfile, draw_fault, fault_rng, parse_contingency
from mallvi.sim_bridge.scene_spec import SimObject

log = logging.getLogger(__name__)


@dataclass
class FaultInjector:
    """Draws faults per skill call and applies them to objects."""

    profile: ContingencyProfile
    rng: np.random.Generator
    log: list[dict[str, Any]] = field(default_factory=list)

    @staticmethod
    def for_episode(level: str | ContingencyProfile, scene: str, seed: int) -> FaultInjector | None:
        """The injector of one episode, or None when the level injects nothing (ContingencySpecError if invalid)."""
        profile = parse_contingency(level) if isinstance(level, str) else level
        if not profile.injects_faults:
            return None
        return FaultInjector(profile, fault_rng(scene, seed, profile.name))

    def draw(self, skill: str) -> str | None:
        """The fault this call of ``skill`` ("grasp" or "place") suffers, or None."""
        return draw_fault(self.rng, self.profile, skill)

    def record(self, kind: str, skill: str, obj: str, sim_time_s: float) -> None:
        self.log.append({"kind": kind, "skill": skill, "object": obj, "sim_time_s": round(sim_time_s, 3)})
        log.info("injected %s during %s of %s", kind, skill, obj)

    def place_offset_m(self) -> NDArray[np.float64]:
        """A horizontal offset of 4–8 cm in a random direction (place_off)."""
        r = float(self.rng.uniform(0.04, 0.08))
        a = float(self.rng.uniform(0.0, 2 * math.pi))
        return np.array([r * math.cos(a), r * math.sin(a), 0.0])


def _body(obj: SimObject) -> sapien.physx.PhysxRigidDynamicComponent | None:
    return obj.entity.find_component_by_type(sapien.physx.PhysxRigidDynamicComponent)


def push_out_of_grasp(obj: SimObject, sideways_world: NDArray[np.float64], gripper_half_width_m: float) -> None:
    """Move ``obj`` along ``sideways_world`` (horizontal, perpendicular to the finger opening) out of the gripper."""
    d = np.asarray(sideways_world, dtype=float)
    d[2] = 0.0
    d /= max(1e-9, float(np.linalg.norm(d)))
    shift = float(max(obj.size_m[0], obj.size_m[1])) / 2 + gripper_half_width_m + 0.02
    pose = obj.entity.get_pose()
    obj.entity.set_pose(sapien.Pose(p=pose.p + shift * d, q=pose.q))
    body = _body(obj)
    if body is not None:
        body.set_linear_velocity([0.0, 0.0, 0.0])
        body.set_angular_velocity([0.0, 0.0, 0.0])


def knock_over(obj: SimObject, rng: np.random.Generator) -> None:
    """Tip ``obj`` 90° about a random horizontal axis through its bounding-box centre and nudge it."""
    yaw = float(rng.uniform(0.0, 2 * math.pi))
    axis = np.array([math.cos(yaw), math.sin(yaw), 0.0])
    pose = obj.entity.get_pose()
    centre_local = obj.local_points.get("bbox_center", sapien.Pose([0.0, 0.0, obj.size_m[2] / 2])).p
    R_old = Rotation.from_quat([pose.q[1], pose.q[2], pose.q[3], pose.q[0]])
    centre = pose.p + R_old.apply(centre_local)
    R_new = Rotation.from_rotvec(axis * math.pi / 2) * R_old
    lying_half_height = 0.5 * float(max(obj.size_m[0], obj.size_m[1]))
    ground = pose.p[2]
    new_centre = np.array([centre[0], centre[1], max(centre[2], ground + lying_half_height + 0.005)])
    p_new = new_centre - R_new.apply(centre_local)
    x, y, z, w = R_new.as_quat()
    obj.entity.set_pose(sapien.Pose(p=p_new, q=[w, x, y, z]))
    body = _body(obj)
    if body is not None:
        body.set_linear_velocity((0.15 * axis[[1, 0, 2]] * np.array([-1.0, 1.0, 0.0])).tolist())
        body.set_angular_velocity([0.0, 0.0, 0.0])
