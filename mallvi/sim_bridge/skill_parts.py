"""``SkillParts``: the collaborators of the simulated skills in one place, for ``SimSkills``, ``upright.py`` and
``lay_down.py``: the rig (arms, embodiment, guard, holder), the object registry, motion, grasp reach, the clock and
the fault hooks. Built by ``SimWorld``; it holds no cameras, no scene and no episode bookkeeping.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mallvi.contracts.geometry import ArmSide
from mallvi.contracts.world_model import WorldModel
from mallvi.robot_drivers.embodiment.loader import Embodiment
from mallvi.sim_bridge.grasp_reach import GraspReach
from mallvi.sim_bridge.grasping import GraspHolder
from mallvi.sim_bridge.motion import Motion
from mallvi.sim_bridge.scene_spec import SimObject
from mallvi.sim_bridge.sim_devices import SimArm
from mallvi.sim_bridge.skill_ports import Clock, FaultHooks, Objects, Rig


@dataclass(frozen=True)
class SkillParts:
    """What the simulated skills work with (see module docstring); the properties are short names into it."""

    rig: Rig
    registry: Objects
    motion: Motion
    grasping: GraspReach
    clock: Clock
    faults: FaultHooks

    @property
    def arms(self) -> Mapping[ArmSide, SimArm]:
        return self.rig.arms

    @property
    def holder(self) -> GraspHolder:
        return self.rig.holder

    @property
    def embodiment(self) -> Embodiment:
        return self.rig.embodiment

    @property
    def arm_spacing_m(self) -> float:
        return self.rig.arm_spacing_m

    @property
    def objects(self) -> Mapping[str, SimObject]:
        return self.registry.bodies

    @property
    def truth(self) -> WorldModel:
        return self.registry.truth

    @property
    def table_top_z(self) -> float:
        return self.registry.table_top_z_m

    def step(self, n_steps: int = 1) -> None:
        self.clock.step(n_steps)
