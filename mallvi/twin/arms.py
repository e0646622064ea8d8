"""The twin's arms: a ``PiperArm`` per side over python-can's virtual bus, each talking to a ``TwinPiperEmulator``
whose joints are the SAPIEN arm's, all waiting on one ``TwinClock``.

The mounts given to the drivers are the caller's (normally from the calibration file); the simulated arms stand
where the world put them.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from mallvi.contracts.devices import DualArm
from mallvi.contracts.geometry import ARM_SIDES, ArmSide, Pose
from mallvi.robot_drivers.piper.config_piper import PiperConfig
from mallvi.robot_drivers.piper.piper import PiperArm
from mallvi.sim_bridge import layout
from mallvi.sim_bridge.world import SimWorld
from mallvi.twin.clock import TwinClock
from mallvi.twin.emulated_arm import TwinPiperEmulator


def true_arm_mounts(world: SimWorld) -> dict[ArmSide, Pose]:
    """Where the world put each arm's base (T_world_base): simulator truth, for calibration checks and tests."""
    quat = layout.arm_base_quat_wxyz()
    return {s: Pose(layout.arm_base_position(s, world.arm_spacing_m), quat) for s in ARM_SIDES}


@dataclass
class TwinArms:
    """Both twin arms: the drivers (``dual``), their emulators and the shared clock. ``close()`` releases all."""

    dual: DualArm
    emulators: dict[ArmSide, TwinPiperEmulator]
    clock: TwinClock
    _closed: bool = field(default=False, repr=False)

    def arm(self, side: ArmSide) -> PiperArm:
        arm = self.dual.left if side == "left" else self.dual.right
        assert isinstance(arm, PiperArm)
        return arm

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for side in ARM_SIDES:
            self.arm(side).disconnect()
        for emu in self.emulators.values():
            emu.close()


def connect_twin_arms(world: SimWorld, mounts: Mapping[ArmSide, Pose] | None = None, *, enable: bool = True,
                      speed_percent: int = 60) -> TwinArms:
    """Start an emulator per arm on fresh virtual CAN channels, connect (and unless ``enable`` is False, enable)
    a Piper driver on each. ``mounts`` defaults to the simulator's true mounts."""
    mounts = dict(mounts) if mounts is not None else true_arm_mounts(world)
    clock = TwinClock(world)
    tag = uuid.uuid4().hex[:8]  # piper_sdk keeps one interface per channel name in a process
    emulators: dict[ArmSide, TwinPiperEmulator] = {}
    arms: dict[ArmSide, PiperArm] = {}
    try:
        for side in ARM_SIDES:
            emu = TwinPiperEmulator(world, side, f"twin_{side}_{tag}").start()
            emulators[side] = emu
            clock.attach(emu)
            cfg = PiperConfig(side=side, can_name=emu.channel, bus_type="virtual", check_can_port=False,
                              base_pose_world=mounts[side], speed_percent=speed_percent,
                              gripper_max_stroke_m=emu.gripper_full_stroke_m, feedback_timeout_s=5.0,
                              home_joints_rad=tuple(world.embodiment.home_qpos_rad))  # type: ignore[arg-type]
            arms[side] = PiperArm(cfg, clock=clock)
            arms[side].connect()
            if enable:
                arms[side].enable()
    except Exception:
        for a in arms.values():
            a.disconnect()
        for e in emulators.values():
            e.close()
        raise
    return TwinArms(DualArm(left=arms["left"], right=arms["right"]), emulators, clock)
