"""The runtime context: everything nodes use but must not change (drivers, perception, backends, stores).

It is passed as LangGraph's ``context`` (``context_schema=GraphContext``) and never stored in the state.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from mallvi.config import Budgets
from mallvi.contracts.geometry import ArmSide
from mallvi.contracts.observation import Observation
from mallvi.contracts.skills import SkillAPI
from mallvi.contracts.station import ReachEnvelope
from mallvi.contracts.world_model import WorldModel
from mallvi.graph.backends.backend_protocols import AgentBackends
from mallvi.graph.ports import PerceptionPort
from mallvi.tracing.trace import TraceWriter

log = logging.getLogger(__name__)


class ArtifactStore:
    """Images by id; the state only keeps ids. Also written to the trace when there is one."""

    def __init__(self, trace: TraceWriter | None = None) -> None:
        self._images: dict[str, NDArray[np.uint8]] = {}
        self._paths: dict[str, str] = {}
        self._trace = trace
        self._counter = itertools.count()
        self._lock = threading.Lock()

    def put(self, name: str, rgb: NDArray[np.uint8], node: str = "") -> str:
        with self._lock:
            image_id = f"{next(self._counter):04d}_{name}"
            self._images[image_id] = rgb
        if self._trace is not None:
            self._paths[image_id] = self._trace.save_image(image_id, rgb, node=node)
        return image_id

    def get(self, image_id: str) -> NDArray[np.uint8]:
        return self._images[image_id]

    def path(self, image_id: str) -> str | None:
        return self._paths.get(image_id)

    def __len__(self) -> int:
        return len(self._images)


@dataclass
class GraphContext:
    """Injected dependencies of one run, built from a Station by ``mallvi.graph.assemble.build_context`` (the only
    place that constructs one).

    Attributes:
        skills: the Actor's primitives.
        observe: returns a fresh observation from the main camera.
        perception: the perception port.
        backends: one backend per agent.
        reach: per arm, the Station's reach envelope (the Thinker plans which arm reaches what with it).
        world: resolves robot-side object names (simulator truth in sim, the scene graph on a rig); the Actor
            maps a perceived object to the nearest one within ``match_radius_m``.
        gripper_opening: proprioception, 0 closed .. 1 open, per arm.
        gripper_holding: the gripper's own "something is between the fingers" sensor, per arm (optional).
        table_top_z: table height in metres (for "lifted" and place heights).
        approve: interrupt before every Actor step for a human decision.
        reflector_enabled: False for the no-reflector ablation (success assumed).
        workspace_m: ((x, y, z) low, (x, y, z) high) box, world frame, that every target position of a plan must
            lie in (None: only the table-height check); the Actor refuses a plan that leaves it before moving.
        extra_views: further cameras by name; the Descriptor adds what only they see, and the Grounder looks there
            for a focus object the main camera does not see.
        wrist_views: per arm, the camera on its gripper, where the Station has one (``graph.second_look`` moves
            an empty hand over a lost object's last known spots to look down through it).
        station: the Station's name ("sim", "piper rig").
        privileged: the Station's inputs a real rig would not have, in words (empty on a rig).
        action_space: "primitives" (the skills: grasp_actor, place_actor, ...) or "ee" (16-number end-effector
            actions moving both arms at once: the benchmark's fine tier); the Thinker plans in it.
    """

    skills: SkillAPI
    observe: Callable[[], Observation]
    perception: PerceptionPort
    backends: AgentBackends
    reach: Mapping[ArmSide, ReachEnvelope]
    world: WorldModel | None = None
    gripper_opening: Callable[[ArmSide], float] | None = None
    gripper_holding: Callable[[ArmSide], bool] | None = None
    table_top_z: float = 0.74
    budgets: Budgets = field(default_factory=Budgets)
    artifacts: ArtifactStore = field(default_factory=ArtifactStore)
    trace: TraceWriter | None = None
    approve: bool = False
    reflector_enabled: bool = True
    match_radius_m: float = 0.03
    on_progress: Callable[[str], None] | None = None
    workspace_m: tuple[tuple[float, float, float], tuple[float, float, float]] | None = None
    extra_views: dict[str, Callable[[], Observation]] = field(default_factory=dict)
    wrist_views: dict[ArmSide, Callable[[], Observation]] = field(default_factory=dict)
    station: str = ""
    privileged: tuple[str, ...] = ()
    action_space: str = "primitives"

    def emit(self, kind: str, **fields: object) -> None:
        """Write a trace event when tracing; never raises for a closed trace."""
        if self.trace is not None:
            try:
                self.trace.emit(kind, **fields)
            except ValueError as e:  # closed file
                log.debug("trace event %s dropped: %s", kind, e)
