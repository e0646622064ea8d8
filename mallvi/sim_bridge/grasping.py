"""Which object each gripper holds, decided from real finger contacts in SAPIEN.

After the fingers close, an object counts as grasped only if *both* finger links touch it and the fingers
stopped apart (they did not close on nothing). Only then is it held to the grasp centre by a stiff 6-DoF drive,
so fast arm motions do not shake it loose; opening the gripper removes the drive and the object falls freely.

A loosened grip (``hinge``) keeps the object at the grasp centre but lets it turn, damped, about the axis
through both finger pads: gravity then swings an object held off its centre of mass until it hangs below the
fingers. Closing again (``try_hold``) holds it stiffly where it hangs.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import numpy as np
import sapien

from mallvi.contracts.geometry import ArmSide
from mallvi.contracts.skills import Failure, FailureKind
from mallvi.sim_bridge.scene_spec import SimObject
from mallvi.sim_bridge.sim_devices import SimArm

log = logging.getLogger(__name__)

MIN_FINGER_GAP_M = 0.003  # fingers closer than this closed on nothing
CONTACT_SEPARATION_M = 2e-3
HOLD_STIFFNESS = 2e4
HOLD_DAMPING = 2e2
HOLD_FORCE_LIMIT = 200.0
HINGE_DAMPING_NMS = 0.05  # N·m·s/rad about the finger axis: about critical for a 0.4 kg bar held 6 cm off centre
_X_TO_Y = sapien.Pose(q=[np.sqrt(0.5), 0.0, 0.0, np.sqrt(0.5)])  # +90° about z: the drive's twist axis on tcp y


class GraspHolder:
    """Tracks held objects per arm and the drives that hold them."""

    def __init__(self, scene: sapien.Scene, arms: Mapping[ArmSide, SimArm], objects: Mapping[str, SimObject]) -> None:
        self._scene = scene
        self._arms = arms
        self._objects = objects
        self._held: dict[ArmSide, tuple[str, sapien.physx.PhysxDriveComponent]] = {}

    def held_by(self, side: ArmSide) -> str | None:
        entry = self._held.get(side)
        return entry[0] if entry else None

    def holder_of(self, name: str) -> ArmSide | None:
        for side, (held, _) in self._held.items():
            if held == name:
                return side
        return None

    def touching_both_fingers(self, side: ArmSide) -> list[str]:
        """Names of objects that both fingers of ``side`` touch right now."""
        fingers = [link.entity for link in self._arms[side].finger_links]
        by_entity = {o.entity: name for name, o in self._objects.items()}
        touched: list[set[str]] = [set() for _ in fingers]
        for contact in self._scene.get_contacts():
            if not contact.points or min(p.separation for p in contact.points) > CONTACT_SEPARATION_M:
                continue
            e0, e1 = contact.bodies[0].entity, contact.bodies[1].entity
            for i, f in enumerate(fingers):
                if e0 == f and e1 in by_entity:
                    touched[i].add(by_entity[e1])
                elif e1 == f and e0 in by_entity:
                    touched[i].add(by_entity[e0])
        both = set.intersection(*touched) if touched else set()
        return sorted(both)

    def try_hold(self, side: ArmSide, expected: str | None = None) -> tuple[str | None, Failure | None]:
        """After closing: hold the object between the fingers. Returns (name, None) or (None, why not):
        ``GRASP_EMPTY`` when the fingers closed on nothing, ``GRASP_OFF_TARGET`` when they stopped on something
        that is not (the expected) object between both fingers."""
        arm = self._arms[side]
        gap = arm.finger_gap_m()
        if gap < MIN_FINGER_GAP_M:
            return None, Failure(FailureKind.GRASP_EMPTY,
                                 f"the {side} gripper closed on nothing (finger gap {gap * 1000:.1f} mm)")
        between = self.touching_both_fingers(side)
        if expected is not None:
            between = [n for n in between if n == expected]
        if not between:
            what = expected or "any object"
            return None, Failure(FailureKind.GRASP_OFF_TARGET, f"{what} is not between the {side} gripper's fingers")
        name = between[0]
        other = self.holder_of(name)
        if other is not None and other != side:
            self.release(other)  # a handover: the receiving gripper takes over
        self.release(side)
        body = self._objects[name].entity.find_component_by_type(sapien.physx.PhysxRigidDynamicComponent)
        if body is None:
            return None, Failure(FailureKind.OBJECT_STATE, f"{name} is static and cannot be picked up")
        drive = self._drive(side, body, name, frame_in_tcp=sapien.Pose())
        drive.set_drive_property_slerp(HOLD_STIFFNESS / 10, HOLD_DAMPING / 10, HOLD_FORCE_LIMIT / 4)
        self._held[side] = (name, drive)
        log.debug("%s arm holds %s (gap %.3f m)", side, name, gap)
        return name, None

    def hinge(self, side: ArmSide, damping_nms: float = HINGE_DAMPING_NMS) -> str | None:
        """Loosen the grip on what ``side`` holds: it stays at the grasp centre but turns freely (damped) about
        the finger axis. The fingers themselves are not moved. Returns the object's name, None if nothing is held.
        """
        entry = self._held.get(side)
        if entry is None:
            return None
        name = entry[0]
        body = self._objects[name].entity.find_component_by_type(sapien.physx.PhysxRigidDynamicComponent)
        if body is None:
            return None
        self.release(side)
        # The drive's twist axis is its frame's x: put it on the tcp's y (the finger opening direction).
        drive = self._drive(side, body, name, frame_in_tcp=_X_TO_Y)
        drive.set_drive_property_swing(HOLD_STIFFNESS / 10, HOLD_DAMPING / 10, HOLD_FORCE_LIMIT / 4)
        drive.set_drive_property_twist(0.0, damping_nms, HOLD_FORCE_LIMIT / 4)
        self._held[side] = (name, drive)
        log.debug("%s arm loosened its grip on %s", side, name)
        return name

    def _drive(self, side: ArmSide, body: sapien.physx.PhysxRigidDynamicComponent, name: str,
               frame_in_tcp: sapien.Pose) -> sapien.physx.PhysxDriveComponent:
        """A drive holding ``name`` where it is now relative to the tcp, stiff along x, y and z; the caller sets
        the rotational drives (in ``frame_in_tcp``, whose x axis is the twist axis)."""
        tcp = self._arms[side].tcp_link
        T_obj_frame = self._objects[name].entity.get_pose().inv() * tcp.entity.get_pose() * frame_in_tcp
        drive = self._scene.create_drive(tcp, frame_in_tcp, body, T_obj_frame)
        for axis in (drive.set_drive_property_x, drive.set_drive_property_y, drive.set_drive_property_z):
            axis(HOLD_STIFFNESS, HOLD_DAMPING, HOLD_FORCE_LIMIT)
        drive.set_drive_target(sapien.Pose())
        return drive

    def release(self, side: ArmSide) -> str | None:
        """Drop whatever ``side`` holds (the object stays where it is, under physics); returns its name."""
        entry = self._held.pop(side, None)
        if entry is None:
            return None
        name, drive = entry
        entity = drive.entity
        if entity is not None:
            entity.remove_component(drive)
        return name

    def held_pose_in_ee(self, side: ArmSide) -> tuple[np.ndarray, sapien.Pose] | None:
        """(size_m, pose of the held object relative to the ee link) for planning, or None."""
        name = self.held_by(side)
        if name is None:
            return None
        obj = self._objects[name]
        rel = self._arms[side].ee_link.entity.get_pose().inv() * obj.entity.get_pose()
        return np.asarray(obj.size_m, dtype=float), rel
