"""SimSkills: the ST-BiBench primitives (and the Tier-3 16-dim action) on the simulated dual-arm world.

Every call returns a ``SkillResult``; a refusal (safety guard, arm allocation), an IK/planning failure or a
grasp that closes on nothing is ``ok=False`` with the reason and its ``FailureKind``, never a silent no-op, and
malformed arguments are a ``BAD_PARAMETERS`` failure, never an exception. Poses are world-frame
``[x, y, z, qw, qx, qy, qz]`` lists of the end-effector (x = approach, y = finger opening, 0.12 m behind the
grasp centre). Objects are resolved by name through the object registry. The skills work with ``SkillParts``
(rig, objects, motion, grasp reach, clock, fault hooks), not with the world.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy.spatial.transform import Rotation

from mallvi.contracts.geometry import ARM_SIDES, ArmSide, Pose, quat_problem
from mallvi.contracts.skills import Failure, FailureKind, SkillResult, parse_pose_list
from mallvi.contracts.world_model import ObjectInfo
from mallvi.robot_drivers.safety.guard import refused
from mallvi.robot_drivers.safety.skill_args import (
    as_number,
    as_numbers,
    first_failure,
    gripper_args,
    is_index,
    resolve_arm,
    resolve_object,
)
from mallvi.sim_bridge.grasp_frames import bottom_of_lying, frame_from, grasp_frames
from mallvi.sim_bridge.planning import PlanResult
from mallvi.sim_bridge.skill_parts import SkillParts
from mallvi.sim_bridge.upright import stand_up

log = logging.getLogger(__name__)

GRASP_LIFT_M = 0.05  # grasp_actor lifts the object this far after a verified grasp
HOME_CLEAR_LIFT_M = 0.08  # back_to_origin rises this far straight up first when it has to
#: where an object stands in the home pose's way, back_to_origin parks the gripper the first of these clear above it
HOME_RAISES_M = (0.04, 0.08, 0.12, 0.16)
NEAR_OBJECT_M = 0.03  # an object this close to the grasp centre is between or beside the fingers
CAME_AWAY_M = 0.03  # a released object this much higher after the retreat went up with the gripper
SLIP_LIFT_M = 0.02  # Tier 3: a drawn slip acts once the grasp centre is this far above where the fingers closed


class SimSkills:
    """The Actor's primitives on the simulated rig (implements the ``SkillAPI`` protocol).

    Args:
        parts: the collaborators (see ``skill_parts.py``).
        grasp_refusal_threshold_m: the benchmark's arm-allocation rule for grasps in metres (None = off).
    """

    def __init__(self, parts: SkillParts, grasp_refusal_threshold_m: float | None = 0.1) -> None:
        self.parts = parts
        self.motion = parts.motion
        self.grasping = parts.grasping
        self.grasp_refusal_threshold_m = grasp_refusal_threshold_m
        self._slips: dict[ArmSide, tuple[str, float]] = {}  # Tier 3: a drawn slip, until the hand lifts
        self._drawn: set[ArmSide] = set()  # Tier 3: hands that drew their grasp's fault since their fingers closed

    # -- helpers -----------------------------------------------------------------------------------------------
    def _arm_and_object(self, arm_tag: object, name: object) -> tuple[ArmSide, ObjectInfo] | SkillResult:
        side = resolve_arm(arm_tag)
        if isinstance(side, Failure):
            return side.result()
        info = resolve_object(self.parts.truth, name)
        return info.result() if isinstance(info, Failure) else (side, info)

    def _grasp_refusal(self, side: ArmSide, actor: str, info: ObjectInfo, gripper_pos: object,
                       values: Sequence[tuple[str, object]]) -> SkillResult | float:
        """The checks every grasp makes before moving: numeric parameters the guard accepts, the benchmark's
        arm-allocation rule (object x beyond the threshold on the other arm's side) and a free gripper.
        Returns the gripper opening to close to, or the failure."""
        p = self.parts
        nums = [as_number(v, name) for name, v in values]
        grip = as_number(gripper_pos, "gripper_pos")
        bad = first_failure(*nums, grip)
        if bad is not None:
            return bad.result()
        assert not isinstance(grip, Failure)
        floats = [v for v in nums if not isinstance(v, Failure)]
        why = p.rig.guard.check_values("grasp parameters", [*floats, grip]) or p.rig.guard.check_gripper(side, grip)
        if why is not None:
            return refused(why).result()
        T = self.grasp_refusal_threshold_m
        x = info.pose.position_m[0]
        if T is not None and ((side == "left" and x > T) or (side == "right" and x < -T)):
            return SkillResult.failure(
                f"target {actor} is too far, {side} arm can not finish this 'grasp' action! Please use another arm!",
                FailureKind.WRONG_ARM,
            )
        held = p.holder.held_by(side)
        if held is not None:
            return SkillResult.failure(f"the {side} arm already holds {held}; place or release it first",
                                       FailureKind.WRONG_ARM)
        return grip

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
        p = self.parts
        if contact_point_id is not None and not is_index(contact_point_id):
            return SkillResult.failure(f"contact_point_id must be an integer, got {contact_point_id!r}",
                                       FailureKind.BAD_PARAMETERS)
        grip = self._grasp_refusal(side, actor, info, gripper_pos,
                                   [("pre_grasp_dis", pre_grasp_dis), ("grasp_dis", grasp_dis)])
        if isinstance(grip, SkillResult):
            return grip
        frames = grasp_frames(info, contact_point_id)
        if isinstance(frames, str):
            return SkillResult.failure(frames, FailureKind.BAD_PARAMETERS)
        grasped = self.grasping.grasp_at(side, info.name, frames, float(pre_grasp_dis), float(grasp_dis), grip)
        if isinstance(grasped, Failure):
            return grasped.result()
        if grasped.giver is not None:
            return SkillResult.success(grasp=grasped.key, object=info.name, handover_from=grasped.giver)
        lift = p.arms[side].ee_pose()
        target = Pose((lift.position_m[0], lift.position_m[1], lift.position_m[2] + GRASP_LIFT_M), lift.quat_wxyz)
        why_lift = self.motion.move(side, target, "straight_then_free")
        if why_lift is not None:
            return why_lift.result(f"grasped {actor} but could not lift it: ", grasp=grasped.key)
        self.grasping.slip_if_drawn(side, info.name, grasped, grip)
        return SkillResult.success(grasp=grasped.key, object=info.name)

    def upright_actor(self, actor: str, arm_tag: ArmSide, pre_grasp_dis: float = 0.1) -> SkillResult:
        """Stand up an object lying on its side: grasp it near its top end, lift it and let it swing upright in a
        loosened grip, then grip it again. The arm ends holding it upright by its top (see ``upright.py``)."""
        resolved = self._arm_and_object(arm_tag, actor)
        if isinstance(resolved, SkillResult):
            return resolved
        side, info = resolved
        refusal = self._grasp_refusal(side, actor, info, 0.0, [("pre_grasp_dis", pre_grasp_dis)])
        if isinstance(refusal, SkillResult):
            return refusal
        return stand_up(self.parts, lambda a, s, d: self.grasp_actor(a, s, pre_grasp_dis=d), side, info.name, info,
                        float(pre_grasp_dis))

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
        p = self.parts
        actor = info.name
        if p.holder.held_by(side) != actor:
            return SkillResult.failure(f"the {side} arm does not hold {actor}; grasp it first", FailureKind.NOT_HOLDING)
        checked = self._place_args(target_pose, pre_dis, dis, is_open, constrain, functional_point_id)
        if isinstance(checked, SkillResult):
            return checked
        vals, pre_dis, dis = checked
        fault, offset_m = p.faults.place_drawn(actor)
        vals[:3] = list(np.asarray(vals[:3], dtype=float) + offset_m)
        fp_key = f"fp{functional_point_id}" if functional_point_id is not None else "fp0"
        lying_bottom = bottom_of_lying(info, p.objects[actor].local_points) if fp_key == "fp0" else None
        if lying_bottom is not None:  # fp0 is the bottom of the object standing up: use the face it lies on
            fp_world = lying_bottom
        elif fp_key in info.points:
            fp_world = info.points[fp_key].p
        elif functional_point_id is None:
            fp_world = info.pose.p
        else:
            return SkillResult.failure(f"{actor} has no functional point {functional_point_id}",
                                       FailureKind.BAD_PARAMETERS)
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
        T_ee = p.arms[side].ee_pose().as_matrix()
        T_ee_new = T_obj_new @ np.linalg.inv(T_obj) @ T_ee
        approach = T_ee_new[:3, 0]
        final = frame_from(T_ee_new[:3, 3] - dis * approach, T_ee_new[:3, :3])
        pre = frame_from(T_ee_new[:3, 3] - pre_dis * approach, T_ee_new[:3, :3])
        bad = self.parts.rig.guard.check_pose(side, pre) or self.parts.rig.guard.check_pose(side, final, current=pre)
        if bad is not None:  # the descent is checked with the pre-place move, before anything moves
            return SkillResult.failure(f"place refused before moving: {bad}", FailureKind.REFUSED_BY_GUARD)
        why = self.motion.move(side, pre, "free")
        if why is not None:
            return why.result(f"cannot bring {actor} above the target: ")
        why = self.motion.move(side, final, "straight")
        if why is not None:
            return why.result(f"cannot lower {actor} onto the target: ")
        p.faults.carried_off(actor, fault)
        if is_open:
            p.holder.release(side)
            released_z = float(p.objects[actor].entity.get_pose().p[2])
            p.arms[side].set_gripper(1.0)
            why = self.motion.move(side, pre, "straight_then_free")
            if why is not None:
                return why.result(f"placed {actor} but could not retreat: ")
            rose_m = float(p.objects[actor].entity.get_pose().p[2]) - released_z
            if rose_m > CAME_AWAY_M:  # still caught between or on the fingers: not placed, whatever the motions did
                return SkillResult.failure(
                    f"released {actor} but it came away with the {side} gripper ({rose_m * 100:.0f} cm up)",
                    FailureKind.EXECUTION)
            p.faults.placed(actor, fault)
        return SkillResult.success(object=actor)

    def _place_args(self, target_pose: object, pre_dis: object, dis: object, is_open: object, constrain: object,
                    functional_point_id: object) -> tuple[list[float], float, float] | SkillResult:
        """place_actor's arguments checked: (target values, pre_dis, dis) or the failure."""
        bad = FailureKind.BAD_PARAMETERS
        vals = as_numbers(target_pose, "target_pose", (3, 7))
        if isinstance(vals, Failure):
            return vals.result()
        why = self.parts.rig.guard.check_values("target pose", vals)
        if why is not None:
            return refused(why).result()
        if len(vals) == 7 and (q_bad := quat_problem(vals[3:], "target_pose")) is not None:
            return SkillResult.failure(q_bad, bad)
        pre, d = as_number(pre_dis, "pre_dis"), as_number(dis, "dis")
        if isinstance(pre, Failure) or isinstance(d, Failure):
            return (pre if isinstance(pre, Failure) else d).result()  # type: ignore[union-attr]
        why = self.parts.rig.guard.check_values("place distances", [pre, d])
        if why is not None:
            return refused(why).result()
        if constrain not in ("free", "align", "auto"):
            return SkillResult.failure(f"constrain must be 'free', 'align' or 'auto', got {constrain!r}", bad)
        if not isinstance(is_open, bool | int | np.integer) or is_open not in (0, 1):
            return SkillResult.failure(f"is_open must be true or false, got {is_open!r}", bad)
        if functional_point_id is not None and not is_index(functional_point_id):
            return SkillResult.failure(f"functional_point_id must be an integer, got {functional_point_id!r}", bad)
        return vals, pre, d

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
        side = resolve_arm(arm_tag)
        if isinstance(side, Failure):
            return side.result()
        p = self.parts
        d_xyz = [as_number(v, name) for name, v in (("x", x), ("y", y), ("z", z))]
        q_in = as_numbers(quat, "quat", (4,)) if quat is not None else []
        bad = first_failure(*d_xyz, q_in)
        if bad is not None:
            return bad.result()
        d_m = [v for v in d_xyz if not isinstance(v, Failure)]
        q_wxyz = [] if isinstance(q_in, Failure) else q_in
        why = p.rig.guard.check_values("displacement", [*d_m, *q_wxyz])
        if why is not None:
            return refused(why).result()
        if quat is not None and (q_bad := quat_problem(q_wxyz, "quat")) is not None:
            return SkillResult.failure(q_bad, FailureKind.BAD_PARAMETERS)
        if move_axis not in ("world", "arm"):
            return SkillResult.failure(f"move_axis must be 'world' or 'arm', got {move_axis!r}",
                                       FailureKind.BAD_PARAMETERS)
        T = p.arms[side].ee_pose().as_matrix()
        d = np.array(d_m, dtype=float)
        pos = T[:3, 3] + (T[:3, :3] @ d if move_axis == "arm" else d)
        q = list(q_wxyz) if quat is not None else Pose.from_matrix(T).quat_wxyz
        target = parse_pose_list([*pos, *q], "displacement target")
        if isinstance(target, Failure):
            return target.result()
        why_move = self.motion.move(side, target, "straight_then_free")
        return why_move.result() if why_move else SkillResult.success(pose=p.arms[side].ee_pose().as_list())

    def move_to_pose(self, arm_tag: ArmSide, target_pose: Sequence[float]) -> SkillResult:
        """Free move (RRT-Connect) of the end-effector to ``[x, y, z, qw, qx, qy, qz]``."""
        side = resolve_arm(arm_tag)
        if isinstance(side, Failure):
            return side.result()
        target = parse_pose_list(target_pose, "target_pose")
        if isinstance(target, Failure):
            return target.result()
        why = self.motion.move(side, target, "free")
        return why.result() if why else SkillResult.success(pose=self.parts.arms[side].ee_pose().as_list())

    def close_gripper(self, arm_tag: ArmSide, pos: float = 0.0) -> SkillResult:
        """Close to ``pos``; an object found between both fingers becomes held."""
        side_pos = self._gripper_args(arm_tag, pos)
        if isinstance(side_pos, SkillResult):
            return side_pos
        side, opening = side_pos
        name, _ = self.grasping.close_and_hold(side, opening, None)
        return SkillResult.success(holding=name)

    def open_gripper(self, arm_tag: ArmSide, pos: float = 1.0) -> SkillResult:
        """Open to ``pos``; whatever the arm held is released."""
        side_pos = self._gripper_args(arm_tag, pos)
        if isinstance(side_pos, SkillResult):
            return side_pos
        side, opening = side_pos
        released = self.parts.holder.release(side)
        self.parts.arms[side].set_gripper(opening)
        return SkillResult.success(released=released)

    def _gripper_args(self, arm_tag: object, pos: object) -> tuple[ArmSide, float] | SkillResult:
        args = gripper_args(arm_tag, pos)
        if isinstance(args, Failure):
            return args.result()
        side, opening = args
        why = self.parts.rig.guard.check_gripper(side, opening)
        return refused(why).result() if why is not None else (side, opening)

    def back_to_origin(self, arm_tag: ArmSide) -> SkillResult:
        """Free move back to the home configuration.

        A gripper with an object within ``NEAR_OBJECT_M`` of its grasp centre (just released, slipped or missed)
        first rises ``HOME_CLEAR_LIFT_M`` straight up, so the way home does not sweep the object off the table; so
        does one that finds no path home at first. Where an object stands in the home pose's way (a bottle set down
        in the bin under it), the arm parks above it instead (``HOME_RAISES_M``) and says so.
        """
        side = resolve_arm(arm_tag)
        if isinstance(side, Failure):
            return side.result()
        p = self.parts
        home, raised_m, in_way = self.motion.clear_goal(side, np.asarray(p.embodiment.home_qpos_rad, dtype=float),
                                                        HOME_RAISES_M)
        near = self._object_near_fingers(side)
        plan: PlanResult | Failure = (self.motion.plan_joints(side, home) if near is None
                                      else Failure(FailureKind.NO_PLAN, f"{near} is next to the fingers"))
        if isinstance(plan, Failure):
            ee = p.arms[side].ee_pose()
            up = Pose((ee.position_m[0], ee.position_m[1], ee.position_m[2] + HOME_CLEAR_LIFT_M), ee.quat_wxyz)
            why = self.motion.move(side, up, "straight")
            if why is not None and near is None:
                return why.result(f"{plan}; rising clear first failed too: ")
            plan = self.motion.plan_joints(side, home)
        if isinstance(plan, Failure):
            return plan.result()
        self.motion.execute({side: plan})
        if raised_m > 0.0:
            return SkillResult.success(f"Action succeeded: parked {raised_m * 100:.0f} cm above the home pose, where "
                                       f"{', '.join(sorted(in_way))} stands in the way.", raised_m=raised_m)
        return SkillResult.success()

    def _object_near_fingers(self, side: ArmSide) -> str | None:
        """An object (not held) within ``NEAR_OBJECT_M`` of the ``side`` gripper's grasp centre, if any."""
        p = self.parts
        tcp = np.asarray(p.arms[side].tcp_pose().position_m, dtype=float)
        held = p.holder.held_by(side)
        return next((name for name, obj in p.objects.items()
                     if name != held and obj.distance_to_m(tcp) < NEAR_OBJECT_M), None)

    def get_arm_pose(self, arm_tag: ArmSide) -> SkillResult:
        """The end-effector pose ``[x, y, z, qw, qx, qy, qz]`` in ``data["pose"]`` (and in the message)."""
        side = resolve_arm(arm_tag)
        if isinstance(side, Failure):
            return side.result()
        pose = [round(v, 4) for v in self.parts.arms[side].ee_pose().as_list()]
        return SkillResult.success(f"{side} arm end-effector pose: {pose}", pose=pose)

    # -- Tier 3 ------------------------------------------------------------------------------------------------
    def execute_ee_action(self, action: Sequence[float]) -> SkillResult:
        """[left xyz, left quat wxyz, left gripper, right xyz, right quat wxyz, right gripper]: both arms together."""
        vals = as_numbers(action, "the action", (16,))
        if isinstance(vals, Failure):
            return vals.result()
        p = self.parts
        guard = p.rig.guard
        bad = guard.check_values("action", vals)
        if bad is not None:
            return refused(bad).result()
        plans: dict[ArmSide, PlanResult] = {}
        grippers: dict[ArmSide, float] = {}
        targets: dict[ArmSide, Pose] = {}
        for i, side in enumerate(ARM_SIDES):
            chunk = vals[8 * i : 8 * i + 8]
            target = parse_pose_list(chunk[:7], f"{side} pose")
            if isinstance(target, Failure):
                return target.result()
            bad = guard.check_gripper(side, chunk[7])
            if bad is not None:
                return refused(bad).result()
            grippers[side], targets[side] = chunk[7], target
        # each arm is planned against the other's current pose, so the two targets must keep their distance
        bad = guard.check_clearance("left", targets["left"], targets["right"])
        if bad is not None:
            return refused(bad).result()
        for side in ARM_SIDES:  # plan both before moving either: a refusal moves nothing
            plan = self.motion.plan(side, targets[side], "straight_then_free", opening=grippers[side])
            if isinstance(plan, Failure):
                return plan.result()
            plans[side] = plan
        let_go: list[str] = []
        was_open = {side: p.arms[side].gripper_opening() >= 0.5 for side in ARM_SIDES}  # by any skill
        for side in ARM_SIDES:
            if grippers[side] > p.arms[side].gripper_opening() + 1e-6:
                name = p.holder.release(side)
                if name is not None:
                    let_go.append(name)
        self.motion.execute(plans, gripper_to=grippers)
        held: dict[str, str | None] = {}
        for side in ARM_SIDES:
            p.arms[side].set_gripper(grippers[side])  # let the fingers finish their travel
            if was_open[side]:
                self._drawn.discard(side)  # the fingers were open: a closing now is a new grasp
            if grippers[side] < 0.5 and p.holder.held_by(side) is None:
                self._hold(side, closing=was_open[side])
            self._slip_if_lifted(side, grippers[side])
        for side in ARM_SIDES:  # a fault that let go in one hand leaves the object in the other's closed fingers
            if grippers[side] < 0.5 and p.holder.held_by(side) is None:
                self._hold(side, closing=False)
            held[side] = p.holder.held_by(side)
        for name in let_go:
            fault, offset_m = p.faults.place_drawn(name)
            p.faults.let_go_off(name, offset_m)
            p.faults.placed(name, fault)
        return SkillResult.success(held=held)

    def _hold(self, side: ArmSide, closing: bool) -> None:
        """Tier 3: hold what lies between the ``side`` fingers. A grasp draws its fault once, when the hand first
        holds something after its fingers closed; a later action only retries a hold that did not take, and takes
        nothing the other hand holds (one object held by both hands stays with the hand that holds it)."""
        p = self.parts
        if not closing and any(p.holder.holder_of(n) not in (None, side) for n in p.holder.touching_both_fingers(side)):
            return
        taken, _ = p.holder.try_hold(side)
        if taken is None or side in self._drawn:
            return
        self._drawn.add(side)
        if p.faults.closed_on(side, taken) == "grasp_slip":
            self._slips[side] = (taken, float(p.arms[side].tcp_pose().position_m[2]))

    def _slip_if_lifted(self, side: ArmSide, gripper_pos: float) -> None:
        """A ``grasp_slip`` drawn when a Tier 3 action closed the fingers acts once the hand has lifted the object
        (its grasp centre 2 cm above where it closed): the object falls out, the command stays closed."""
        pending = self._slips.get(side)
        if pending is None:
            return
        actor, closed_z = pending
        p = self.parts
        if p.holder.held_by(side) != actor:
            del self._slips[side]
            return
        if float(p.arms[side].tcp_pose().position_m[2]) - closed_z >= SLIP_LIFT_M:
            del self._slips[side]
            p.faults.grasp_lifted(side, actor, "grasp_slip", gripper_pos)
