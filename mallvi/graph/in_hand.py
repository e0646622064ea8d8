"""An object a hand holds: the camera may not see it between the fingers, yet it is there.

An object counts as held by an arm when that arm's gripper still senses something between its fingers and either
an attempt left it in that hand (the Actor's record, ``ActorReport.left_in_hand``: a place whose motion had no plan
keeps it) or the last finished subtask that concerned it ended with the Reflector's check ``held_by(object, arm)``
holding. It is then looked for in the image nearest the hand, kept in the scene by a re-scan that no longer sees
it, and localised between that arm's fingers (marked ``memory: held by the <arm> gripper``) where the image does
not show it.
"""

from __future__ import annotations

from mallvi.contracts.geometry import ArmSide
from mallvi.graph.ports import AgentContext
from mallvi.graph.schemas import SceneObject
from mallvi.graph.state import GraphState
from mallvi.robot_drivers.safety.guard import SafetyConfig

HELD_PREFIX = "memory: held by the "
TCP_OFFSET_M = SafetyConfig().tcp_offset_m  # end-effector frame to the point between the fingers
OPEN_MIN, OPEN_MAX = 0.02, 0.85  # without a holding sensor: a gripper neither closed on nothing nor open


def _senses(ctx: AgentContext, arm: ArmSide) -> bool:
    if ctx.gripper_holding is not None:
        return bool(ctx.gripper_holding(arm))
    if ctx.gripper_opening is not None:
        return OPEN_MIN < ctx.gripper_opening(arm) < OPEN_MAX
    return False


def holding_arm(state: GraphState, ctx: AgentContext, object_id: str) -> ArmSide | None:
    """The arm holding ``object_id`` (see the module's docstring), else None."""
    kept = state.get("in_hand", {}).get(object_id)
    if kept in ("left", "right"):
        arm_now: ArmSide = "left" if kept == "left" else "right"
        return arm_now if _senses(ctx, arm_now) else None
    plan = state["plan"]
    if plan is None:
        return None
    for j in sorted(set(state["completed"]), reverse=True):
        if j >= len(plan.subtasks):
            continue
        sub = plan.subtasks[j]
        held = [p.args[1] for p in sub.post if p.relation == "held_by" and len(p.args) == 2
                and p.args[0] == object_id]
        if held:
            arm: ArmSide = "left" if held[-1] == "left" else "right"
            return arm if held[-1] in ("left", "right") and _senses(ctx, arm) else None
        if sub.obj.instance == object_id:
            return None  # a later subtask put it somewhere
    return None


def grasp_centre(ee_pose: list[float]) -> tuple[float, float, float]:
    """The point between the fingers of an end-effector pose ``[x, y, z, qw, qx, qy, qz]`` (world frame):
    ``tcp_offset_m`` along the pose's x (approach) axis."""
    x, y, z, w, qx, qy, qz = (float(v) for v in ee_pose[:7])
    axis = (1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy + w * qz), 2 * (qx * qz - w * qy))
    d = TCP_OFFSET_M
    return (x + d * axis[0], y + d * axis[1], z + d * axis[2])


def hand_centre(ctx: AgentContext, arm: ArmSide) -> tuple[float, float, float] | None:
    """The grasp centre of ``arm``'s hand now, None when its pose cannot be read."""
    pose = ctx.skills.get_arm_pose(arm)
    ee = pose.data.get("pose") if pose.ok else None
    return grasp_centre(list(ee)) if ee is not None and len(ee) >= 7 else None


def held_at(state: GraphState, ctx: AgentContext, object_id: str) -> tuple[float, float, float] | None:
    """The grasp centre of the hand holding ``object_id`` (``holding_arm``), None when no hand holds it or the
    arm's pose cannot be read."""
    arm = holding_arm(state, ctx, object_id)
    return hand_centre(ctx, arm) if arm is not None else None


def in_hand(obj: SceneObject, arm: ArmSide, ctx: AgentContext) -> SceneObject:
    """``obj`` localised between ``arm``'s fingers (its earlier points dropped: they were where it was)."""
    position = hand_centre(ctx, arm) or obj.position_m
    return obj.model_copy(update={"position_m": position, "points": {}, "source": f"{HELD_PREFIX}{arm} gripper"})
