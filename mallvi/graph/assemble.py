"""One way to assemble a run: the graph's ``GraphContext`` from any Station.

The one run path (``orchestration/run_instruction.py``), which ``mallvi run``, ``mallvi bench`` and the rig take, calls
``build_context``; nothing else constructs a ``GraphContext``, so every run gets the same fields whatever robot
set-up it runs on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mallvi.config import Budgets
from mallvi.contracts.geometry import ARM_SIDES, ArmSide
from mallvi.contracts.observation import Observation
from mallvi.contracts.station import Station, bounding_box, wrist_camera
from mallvi.graph.backends.backend_protocols import AgentBackends
from mallvi.graph.context import ArtifactStore, GraphContext
from mallvi.graph.ports import PerceptionPort
from mallvi.tracing.trace import TraceWriter

ACTION_SPACES = ("primitives", "ee")
PERCEPTION_PRIVILEGED = "objects detected from the simulator's segmentation (--perception sim)"


def build_context(
    station: Station,
    perception: PerceptionPort,
    backends: AgentBackends,
    *,
    budgets: Budgets | None = None,
    trace: TraceWriter | None = None,
    approve: bool = False,
    reflector_enabled: bool = True,
    on_progress: Callable[[str], None] | None = None,
    privileged_perception: bool = False,
    action_space: str = "primitives",
) -> GraphContext:
    """The runtime context of one graph run on ``station``.

    The main camera is what the agents observe; the Station's other cameras are further views. The plan-target
    box is the smallest box holding every arm's workspace (the guard still checks each arm's own box).
    ``privileged_perception``: perception reads simulator truth; it is added to the Station's privileged inputs.
    ``action_space``: what the Thinker plans in ("primitives", or "ee" for end-effector actions).
    """
    if action_space not in ACTION_SPACES:
        raise ValueError(f"action space must be one of {', '.join(ACTION_SPACES)}, got {action_space!r}")
    arms = station.arms
    main = station.cameras[station.main_camera]

    def holding(arm: ArmSide) -> bool:
        return arms.held_object(arm) is not None

    privileged = tuple(station.privileged) + ((PERCEPTION_PRIVILEGED,) if privileged_perception else ())
    return GraphContext(
        skills=station.skills, observe=main.read, perception=perception, backends=backends, reach=station.reach,
        world=station.world, gripper_opening=arms.gripper_opening, gripper_holding=holding,
        table_top_z=station.table_top_z_m, budgets=budgets or Budgets(), artifacts=ArtifactStore(trace),
        trace=trace, approve=approve, reflector_enabled=reflector_enabled, on_progress=on_progress,
        workspace_m=bounding_box(station.workspace_m), extra_views=_views(station),
        wrist_views=_wrist_views(station),
        station=station.name, privileged=privileged, action_space=action_space,
    )


def _views(station: Station) -> dict[str, Callable[[], Observation]]:
    """The Station's fixed cameras other than the main one, by name."""
    wrists = {wrist_camera(side) for side in ARM_SIDES}
    return {name: cam.read for name, cam in station.cameras.items()
            if name != station.main_camera and name not in wrists}


def _wrist_views(station: Station) -> dict[ArmSide, Callable[[], Observation]]:
    """The cameras on the Station's grippers, by arm."""
    return {side: station.cameras[wrist_camera(side)].read for side in ARM_SIDES
            if wrist_camera(side) in station.cameras and wrist_camera(side) != station.main_camera}


def run_start_fields(ctx: GraphContext) -> dict[str, Any]:
    """What the trace's ``run_start`` event records about the Station a run is on."""
    return {"station": ctx.station, "privileged": list(ctx.privileged)}
