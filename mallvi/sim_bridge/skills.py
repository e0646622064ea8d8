"""SimSkills: the ST-BiBench primitives (and the Tier-3 16-dim action) on the simulated dual-arm world.

Every call returns a ``SkillResult``; a refusal (safety guard, arm allocation), an IK/planning failure or a
grasp that closes on nothing is ``ok=False`` with the reason, never a silent no-op. Poses are world-frame
``[x, y, z, qw, qx, qy, qz]`` lists of the end-effector (x = approach, y = finger opening, 0.12 m behind the
grasp centre). Objects are resolved by name through ``world.truth``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.contracts.errors import UnknownObjectError
from mallvi.contracts.geometry import ARM_SIDES, ArmSide, Pose, parse_arm
from mallvi.contracts.skills import FailureKind, SkillResult, parse_pose_list
from mallvi.contracts.world_model import ObjectInfo
from mallvi.sim_bridge.contingency import knock_over
from mallvi.sim_bridge.grasp_frames import bottom_of_lying, frame_from, grasp_frames
from mallvi.sim_bridge.grasp_reach import GraspReach
from mallvi.sim_bridge.motion import Motion
from mallvi.sim_bridge.planning import PlanResult
from mallvi.sim_bridge.upright import stand_up

if TYPE_CHECKING:
    from mallvi.sim_bridge.world import SimWorld

log = logging.getLogger(__name__)

GRASP_LIFT_M = 0.05  # grasp_actor lifts the object this far after a verified grasp
HOME_CLEAR_LIFT_M = 0.08  # back_to_origin rises this far straight up first when it has to
NEAR_OBJECT_M = 0.03  # an object this close to the grasp centre is between or beside the fingers


def _is_index(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


class SimSkills:
    """The Actor's primitives on a ``SimWorld`` (implements the ``SkillAPI`` protocol)."""

    def __init__(self, world: SimWorld) -> None:
        self.world = world
        self.motion = Motion(world)
        self.grasping = GraspReach(world, self.motion)

    # -- helpers -----------------------------------------------------------------------------------------------
    def _arm(self, arm_tag: str) -> ArmSide | SkillResult:
        try:
            return parse_arm(arm_tag)
        except (ValueError, AttributeError) as e:
            return SkillResult.failure(str(e))

    def _arm_and_object(self, arm_tag: str, name: str) -> tuple[ArmSide, ObjectInfo] | SkillResult:
        side = self._arm(arm_tag)
        if isinstance(side, SkillResult):
            return side
        info = self._object(name)
        return info if isinstance(info, SkillResult) else (side, info)

    def _object(self, name: str) -> ObjectInfo | SkillResult:
        try:
            return self.world.truth.get_object(name)
        except UnknownObjectError as e:
            return SkillResult.failure(str(e))

    def _grasp_refusal(self, side: ArmSide, actor: str, info: ObjectInfo, gripper_pos: float,
                       values: Sequence[float]) -> SkillResult | None:
        """The checks every grasp makes before moving: finite parameters, the benchmark's arm-allocation rule
        (object x beyond the threshold on the other arm's side) and a free gripper."""
        w = self.world
        bad = w.guard.check_values("grasp parameters", [*values, gripper_pos])
        if bad is None:
            bad = w.guard.check_gripper(side, gripper_pos)
        if bad is not None:
            return SkillResult.failure(bad)
        T = w.grasp_refusal_threshold_m
        x = info.pose.position_m[0]
        if T is not None and ((side == "left" and x > T) or (side == "right" and x < -T)):
            return SkillResult.failure(
                f"target {actor} is too far, {side} arm can not finish this 'grasp' action! Please use another arm!"
            )
        held = w.holder.held_by(side)
        if held is not None:
            return SkillResult.failure(f"the {side} arm already holds {held}; place or release it first")
        return None

    def draw_place_fault(self, actor: str) -> tuple[str | None, NDArray[np.float64]]:
        """The episode's fault for one place of ``actor``, and the offset (world, metres) its target gets: a
        ``place_off`` (recorded here) moves it 4-8 cm, anything else leaves it."""
        w = self.world
        fault = w.faults.draw("place") if w.faults is not None else None
        offset_m = np.zeros(3)
        if fault == "place_off" and w.faults is not None:
            offset_m = w.faults.place_offset_m()
            w.faults.record(fault, "place", actor, w.sim_time_s)
        return fault, offset_m

    def knock_over_if_drawn(self, actor: str, fault: str | None) -> None:
        """Apply a drawn ``knock_over`` once the object is put down and the hand has retreated."""
        w = self.world
        if fault == "knock_over" and w.faults is not None:
            knock_over(w.objects[actor], w.faults.rng)
            w.faults.record(fault, "place", actor, w.sim_time_s)
            w.settle(1.0)

    # -- Tier 2 primitives -------------------------------------------------------------------------------------
    def grasp_actor(
        self,
        actor: str,
        arm_tag: ArmSide,
        pre_grasp_dis: float = 0.1,
        grasp_dis: float = 0.0,
        gripper_pos: float = 0.0,
        contact_point_id: int | None = None,
    ) -> SkillResult:
        """Pre-grasp (RRT-Connect), straight approach, close, verify the object is between the fingers, lift."""
        resolved = self._arm_and_object(arm_tag, actor)
        if isinstance(resolved, SkillResult):
            return resolved
        side, info = resolved
        w = self.world
        refusal = self._grasp_refusal(side, actor, info, gripper_pos, [pre_grasp_dis, grasp_dis])
        if refusal is not None:
            return refusal
        if contact_point_id is not None and not _is_index(contact_point_id):
            return SkillResult.failure(f"contact_point_id must be an integer, got {contact_point_id!r}")
        frames = grasp_frames(info, contact_point_id)
        if isinstance(frames, str):
            return SkillResult.failure(frames)
        grasped = self.grasping.grasp_at(side, actor, frames, pre_grasp_dis, grasp_dis, gripper_pos)
        if isinstance(grasped, SkillResult):
            return grasped
        if grasped.giver is not None:
            return SkillResult.success(grasp=grasped.key, object=actor, handover_from=grasped.giver)
        lift = w.arms[side].ee_pose()
        target = Pose((lift.position_m[0], lift.position_m[1], lift.position_m[2] + GRASP_LIFT_M), lift.quat_wxyz)
        why_lift = self.motion.move(side, target, "straight_then_free")
        if why_lift is not None:
            return SkillResult.failure(f"grasped {actor} but could not lift it: {why_lift}", grasp=grasped.key)
        self.grasping.slip_if_drawn(side, actor, grasped, gripper_pos)
        return SkillResult.success(grasp=grasped.key, object=actor)

    def upright_actor(self, actor: str, arm_tag: ArmSide, pre_grasp_dis: float = 0.1) -> SkillResult:
        """Stand up an object lying on its side: grasp it near its top end, lift it and let it swing upright in a
        loosened grip, then grip it again. The arm ends holding it upright by its top (see ``upright.py``)."""
        resolved = self._arm_and_object(arm_tag, actor)
        if isinstance(resolved, SkillResult):
            return resolved
        side, info = resolved
        refusal = self._grasp_refusal(side, actor, info, 0.0, [pre_grasp_dis])
        if refusal is not None:
            return refusal
        return stand_up(self, side, actor, info, pre_grasp_dis)

    def place_actor(
        self,
        actor: str,
        arm_tag: ArmSide,
        target_pose: Sequence[float],
        functional_point_id: int | None = None,
        pre_dis: float = 0.1,
        dis: float = 0.02,
        is_open: bool = True,
        constrain: Literal["free", "align", "auto"] = "auto",
    ) -> SkillResult:
        """Move the held object so its functional point reaches ``target_pose`` (3 or 7 values), then release."""
        resolved = self._arm_and_object(arm_tag, actor)
        if isinstance(resolved, SkillResult):
            return resolved
        side, info = resolved
        w = self.world
        if w.holder.held_by(side) != actor:
            return SkillResult.failure(f"the {side} arm does not hold {actor}; grasp it first")
        try:
            vals = [float(v) for v in target_pose]
        except (TypeError, ValueError):
            vals = []
        if len(vals) not in (3, 7) or w.guard.check_values("target pose", vals) is not None:
            return SkillResult.failure(f"target_pose must be 3 or 7 finite numbers, got {target_pose!r}")
        bad = w.guard.check_values("place distances", [pre_dis, dis])
        if bad is not None or constrain not in ("free", "align", "auto"):
            return SkillResult.failure(bad or f"constrain must be 'free', 'align' or 'auto', got {constrain!r}")
        if functional_point_id is not None and not _is_index(functional_point_id):
            return SkillResult.failure(f"functional_point_id must be an integer, got {functional_point_id!r}")
        fault, offset_m = self.draw_place_fault(actor)
        vals[:3] = list(np.asarray(vals[:3], dtype=float) + offset_m)
        fp_key = f"fp{functional_point_id}" if functional_point_id is not None else "fp0"
        lying_bottom = bottom_of_lying(info, w.objects[actor].local_points) if fp_key == "fp0" else None
        if lying_bottom is not None:  # fp0 is the bottom of the object standing up: use the face it lies on
            fp_world = lying_bottom
        elif fp_key in info.points:
            fp_world = info.points[fp_key].p
        elif functional_point_id is None:
            fp_world = info.pose.p
        else:
            return SkillResult.failure(f"{actor} has no functional point {functional_point_id}")
        T_obj = info.pose.as_matrix()
        R_new = T_obj[:3, :3]
        mode = ("align" if len(vals) == 7 else "free") if constrain == "auto" else constrain
        if mode == "align" and len(vals) == 7:
            target_x = Pose.from_arrays(vals[:3], vals[3:]).as_matrix()[:3, 0]
            yaw_delta = math.atan2(target_x[1], target_x[0]) - math.atan2(T_obj[1, 0], T_obj[0, 0])
            R_new = Rotation.from_euler("z", yaw_delta).as_matrix() @ R_new
        fp_in_obj = T_obj[:3, :3].T @ (fp_world - T_obj[:3, 3])
        T_obj_new = np.eye(4)
        T_obj_new[:3, :3] = R_new
        T_obj_new[:3, 3] = np.asarray(vals[:3]) - R_new @ fp_in_obj
        T_ee = w.arms[side].ee_pose().as_matrix()
        T_ee_new = T_obj_new @ np.linalg.inv(T_obj) @ T_ee
        approach = T_ee_new[:3, 0]
        final = frame_from(T_ee_new[:3, 3] - dis * approach, T_ee_new[:3, :3])
        pre = frame_from(T_ee_new[:3, 3] - pre_dis * approach, T_ee_new[:3, :3])
        bad = w.guard.check_pose(side, pre) or w.guard.check_pose(side, final, current=pre)
        if bad is not None:  # the descent is checked with the pre-place move, before anything moves
            return SkillResult.failure(f"place refused before moving: {bad}", FailureKind.REFUSED_BY_GUARD)
        why = self.motion.move(side, pre, "free")
        if why is not None:
            return SkillResult.failure(f"cannot bring {actor} above the target: {why}")
        why = self.motion.move(side, final, "straight")
        if why is not None:
            return SkillResult.failure(f"cannot lower {actor} onto the target: {why}")
        if is_open:
            w.holder.release(side)
            w.arms[side].set_gripper(1.0)
            why = self.motion.move(side, pre, "straight_then_free")
            if why is not None:
                return SkillResult.failure(f"placed {actor} but could not retreat: {why}")
            self.knock_over_if_drawn(actor, fault)
        return SkillResult.success(object=actor)

    def move_by_displacement(
        self,
        arm_tag: ArmSide,
        x: float = 0.0,
        y: float = 0.0,
        z: float = 0.0,
        quat: Sequence[float] | None = None,
        move_axis: Literal["world", "arm"] = "world",
    ) -> SkillResult:
        """Shift the end-effector by (x, y, z) metres in the world or its own frame, optionally to ``quat``."""
        side = self._arm(arm_tag)
        if isinstance(side, SkillResult):
            return side
        w = self.world
        bad = w.guard.check_values("displacement", [x, y, z] + ([*quat] if quat is not None else []))
        if bad is not None:
            return SkillResult.failure(bad)
        if move_axis not in ("world", "arm"):
            return SkillResult.failure(f"move_axis must be 'world' or 'arm', got {move_axis!r}")
        T = w.arms[side].ee_pose().as_matrix()
        d = np.array([x, y, z], dtype=float)
        p = T[:3, 3] + (T[:3, :3] @ d if move_axis == "arm" else d)
        q = list(quat) if quat is not None else Pose.from_matrix(T).quat_wxyz
        target = parse_pose_list([*p, *q], "displacement target")
        if isinstance(target, str):
            return SkillResult.failure(target)
        why = self.motion.move(side, target, "straight_then_free")
        return SkillResult.failure(why) if why else SkillResult.success(pose=w.arms[side].ee_pose().as_list())

    def move_to_pose(self, arm_tag: ArmSide, target_pose: Sequence[float]) -> SkillResult:
        """Free move (RRT-Connect) of the end-effector to ``[x, y, z, qw, qx, qy, qz]``."""
        side = self._arm(arm_tag)
        if isinstance(side, SkillResult):
            return side
        target = parse_pose_list(target_pose, "target_pose")
        if isinstance(target, str):
            return SkillResult.failure(target)
        why = self.motion.move(side, target, "free")
        return SkillResult.failure(why) if why else SkillResult.success(pose=self.world.arms[side].ee_pose().as_list())

    def close_gripper(self, arm_tag: ArmSide, pos: float = 0.0) -> SkillResult:
        """Close to ``pos``; an object found between both fingers becomes held."""
        side = self._arm(arm_tag)
        if isinstance(side, SkillResult):
            return side
        bad = self.world.guard.check_gripper(side, float(pos))
        if bad is not None:
            return SkillResult.failure(bad)
        name, _ = self.grasping.close_and_hold(side, float(pos), None)
        return SkillResult.success(holding=name)

    def open_gripper(self, arm_tag: ArmSide, pos: float = 1.0) -> SkillResult:
        """Open to ``pos``; whatever the arm held is released."""
        side = self._arm(arm_tag)
        if isinstance(side, SkillResult):
            return side
        bad = self.world.guard.check_gripper(side, float(pos))
        if bad is not None:
            return SkillResult.failure(bad)
        released = self.world.holder.release(side)
        self.world.arms[side].set_gripper(float(pos))
        return SkillResult.success(released=released)

    def back_to_origin(self, arm_tag: ArmSide) -> SkillResult:
        """Free move back to the home configuration.

        A gripper with an object within ``NEAR_OBJECT_M`` of its grasp centre (just released, slipped or missed)
        first rises ``HOME_CLEAR_LIFT_M`` straight up, so the way home does not sweep the object off the table; so
        does one that finds no path home at first.
        """
        side = self._arm(arm_tag)
        if isinstance(side, SkillResult):
            return side
        home = np.asarray(self.world.embodiment.home_qpos_rad, dtype=float)
        near = self._object_near_fingers(side)
        plan = self.motion.plan_joints(side, home) if near is None else f"{near} is next to the fingers"
        if isinstance(plan, str):
            ee = self.world.arms[side].ee_pose()
            up = Pose((ee.position_m[0], ee.position_m[1], ee.position_m[2] + HOME_CLEAR_LIFT_M), ee.quat_wxyz)
            why = self.motion.move(side, up, "straight")
            if why is not None and near is None:
                return SkillResult.failure(f"{plan}; rising clear first failed too: {why}")
            plan = self.motion.plan_joints(side, home)
        if isinstance(plan, str):
            return SkillResult.failure(plan)
        self.motion.execute({side: plan})
        return SkillResult.success()

    def _object_near_fingers(self, side: ArmSide) -> str | None:
        """An object (not held) within ``NEAR_OBJECT_M`` of the ``side`` gripper's grasp centre, if any."""
        w = self.world
        tcp = np.asarray(w.arms[side].tcp_pose().position_m, dtype=float)
        held = w.holder.held_by(side)
        return next((name for name, obj in w.objects.items()
                     if name != held and obj.distance_to_m(tcp) < NEAR_OBJECT_M), None)

    def get_arm_pose(self, arm_tag: ArmSide) -> SkillResult:
        """The end-effector pose ``[x, y, z, qw, qx, qy, qz]`` in ``data["pose"]`` (and in the message)."""
        side = self._arm(arm_tag)
        if isinstance(side, SkillResult):
            return side
        pose = [round(v, 4) for v in self.world.arms[side].ee_pose().as_list()]
        return SkillResult.success(f"{side} arm end-effector pose: {pose}", pose=pose)

    # -- Tier 3 ------------------------------------------------------------------------------------------------
    def execute_ee_action(self, action: Sequence[float]) -> SkillResult:
        """[left xyz, left quat wxyz, left gripper, right xyz, right quat wxyz, right gripper]: both arms together."""
        try:
            vals = [float(v) for v in action]
        except (TypeError, ValueError):
            return SkillResult.failure(f"the action must be 16 numbers, got {action!r}")
        if len(vals) != 16:
            return SkillResult.failure(f"the action must be 16 numbers, got {len(vals)}")
        w = self.world
        bad = w.guard.check_values("action", vals)
        if bad is not None:
            return SkillResult.failure(bad)
        plans: dict[ArmSide, PlanResult] = {}
        grippers: dict[ArmSide, float] = {}
        targets: dict[ArmSide, Pose] = {}
        for i, side in enumerate(ARM_SIDES):
            chunk = vals[8 * i : 8 * i + 8]
            target = parse_pose_list(chunk[:7], f"{side} pose")
            if isinstance(target, str):
                return SkillResult.failure(target)
            bad = w.guard.check_gripper(side, chunk[7])
            if bad is not None:
                return SkillResult.failure(bad)
            grippers[side], targets[side] = chunk[7], target
        # each arm is planned against the other's current pose, so the two targets must keep their distance
        bad = w.guard.check_clearance("left", targets["left"], targets["right"])
        if bad is not None:
            return SkillResult.failure(bad)
        for side in ARM_SIDES:  # plan both before moving either: a refusal moves nothing
            target = targets[side]
            plan = self.motion.plan(side, target, "straight_then_free")
            if isinstance(plan, str):
                return SkillResult.failure(plan)
            plans[side] = plan
        for side in ARM_SIDES:
            if grippers[side] > w.arms[side].gripper_opening() + 1e-6:
                w.holder.release(side)
        self.motion.execute(plans, gripper_to=grippers)
        held: dict[str, str | None] = {}
        for side in ARM_SIDES:
            w.arms[side].set_gripper(grippers[side])  # let the fingers finish their travel
            if grippers[side] < 0.5 and w.holder.held_by(side) is None:
                w.holder.try_hold(side)
            held[side] = w.holder.held_by(side)
        return SkillResult.success(held=held)
