"""The narrow collaborators the simulated skills work with, instead of the whole ``SimWorld``.

``Clock`` steps physics and tells the simulated time; ``Rig`` is the simulated robot (arms, their description,
the safety guard, the grasp holder); ``Objects`` is the object registry; ``FaultHooks`` is where fault injection
plugs into the skills (``contingency.SimFaults``, or ``NO_FAULTS`` when the episode injects none). ``SimWorld``
builds them; nothing here imports the world or the skills.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.geometry import ArmSide
from mallvi.contracts.world_model import WorldModel
from mallvi.robot_drivers.embodiment.loader import Embodiment
from mallvi.robot_drivers.safety.guard import SafetyGuard
from mallvi.sim_bridge.grasping import GraspHolder
from mallvi.sim_bridge.scene_spec import SimObject
from mallvi.sim_bridge.sim_devices import SimArm


class Clock(Protocol):
    """Advances the simulation in physics steps (1/250 s) and tells its time."""

    def step(self, n_steps: int = 1) -> None: ...

    def settle(self, max_s: float = 1.0, tol_m_s: float = 2e-3) -> float: ...

    @property
    def sim_time_s(self) -> float: ...


class FaultHooks(Protocol):
    """The points where an episode's faults act on a skill (see ``contingency.py``): five for the Tier 2 skills,
    two more for Tier 3's end-effector actions."""

    def grasp_closing(self, side: ArmSide, actor: str) -> str | None:
        """The fingers are about to close on ``actor``: draw this grasp's fault and apply a ``grasp_miss`` now.
        Returns the fault drawn (or None)."""
        ...

    def grasp_lifted(self, side: ArmSide, actor: str, fault: str | None, gripper_pos: float) -> None:
        """The grasped object was lifted: apply a ``grasp_slip`` drawn for it."""
        ...

    def place_drawn(self, actor: str) -> tuple[str | None, NDArray[np.float64]]:
        """A place of ``actor`` starts: its fault and the offset (world, metres) its target gets."""
        ...

    def carried_off(self, actor: str, fault: str | None) -> None:
        """The arm brought ``actor`` down at its (offset) target: a ``place_off`` drawn for it has acted."""
        ...

    def placed(self, actor: str, fault: str | None) -> None:
        """``actor`` was put down and the hand retreated: apply a ``knock_over`` drawn for this place."""
        ...

    def closed_on(self, side: ArmSide, actor: str) -> str | None:
        """A Tier 3 action closed ``side``'s fingers on ``actor`` (it is held now): draw this grasp's fault and
        apply a ``grasp_miss`` now (the object pushed out, nothing held). Returns the fault drawn (or None)."""
        ...

    def let_go_off(self, actor: str, offset_m: NDArray[np.float64]) -> None:
        """A Tier 3 action let go of ``actor``: move it by ``offset_m`` (a ``place_off`` drawn for it)."""
        ...


class NoFaults:
    """``FaultHooks`` of an episode without fault injection."""

    def grasp_closing(self, side: ArmSide, actor: str) -> str | None:
        return None

    def grasp_lifted(self, side: ArmSide, actor: str, fault: str | None, gripper_pos: float) -> None:
        return None

    def place_drawn(self, actor: str) -> tuple[str | None, NDArray[np.float64]]:
        return None, np.zeros(3)

    def carried_off(self, actor: str, fault: str | None) -> None:
        return None

    def placed(self, actor: str, fault: str | None) -> None:
        return None

    def closed_on(self, side: ArmSide, actor: str) -> str | None:
        return None

    def let_go_off(self, actor: str, offset_m: NDArray[np.float64]) -> None:
        return None


NO_FAULTS = NoFaults()


@dataclass(frozen=True)
class Rig:
    """The simulated robot the skills command: its arms, their description, the guard and the holder."""

    arms: Mapping[ArmSide, SimArm]
    embodiment: Embodiment
    guard: SafetyGuard
    holder: GraspHolder
    arm_spacing_m: float


@dataclass(frozen=True)
class Objects:
    """The object registry: the simulated bodies by name and the ``WorldModel`` that resolves names."""

    bodies: Mapping[str, SimObject]
    truth: WorldModel
    table_top_z_m: float
