"""What the agent backends and the graph's nodes see of a run, as protocols (``GraphContext`` provides them).

The backends depend on these narrow views instead of on ``GraphContext`` itself, so ``graph.context`` can hold
the backends without an import circle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from mallvi.contracts.geometry import ArmSide
from mallvi.contracts.observation import Observation
from mallvi.contracts.skills import SkillAPI
from mallvi.contracts.station import ReachEnvelope
from mallvi.graph.schemas import Detection2D, SceneObject


class PerceptionPort(Protocol):
    """The perception the graph needs, in its own plain types (an adapter wraps mallvi.perception)."""

    def scan(self, obs: Observation) -> list[SceneObject]:
        """Every object perception finds in the frame, localised in 3D."""
        ...

    def detect(self, obs: Observation, queries: dict[str, str]) -> dict[str, list[Detection2D]]:
        """Candidate boxes per query key ({object id: text query}); an unseen object maps to []."""
        ...

    def localize(self, obs: Observation, det: Detection2D) -> SceneObject | None:
        """The 3D object behind a detection (grasp centre and extent), None if depth is unusable."""
        ...


class AgentContext(Protocol):
    """What an agent backend may read from the run: perception, the table height, the grippers' state, the
    skills (the Reflector asks for arm poses) and further camera views."""

    @property
    def perception(self) -> PerceptionPort: ...

    @property
    def table_top_z(self) -> float: ...

    @property
    def gripper_opening(self) -> Callable[[ArmSide], float] | None: ...

    @property
    def gripper_holding(self) -> Callable[[ArmSide], bool] | None: ...

    @property
    def skills(self) -> SkillAPI: ...

    @property
    def extra_views(self) -> dict[str, Callable[[], Observation]]: ...

    @property
    def reach(self) -> Mapping[ArmSide, ReachEnvelope]: ...

    @property
    def action_space(self) -> str:
        """ "primitives" (the skills) or "ee" (16-number end-effector actions, both arms at once)."""
        ...
