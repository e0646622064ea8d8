"""Which arm description the simulator loads: the default Piper-kinematics arm or any URDF/SRDF pair."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mallvi.robot_drivers.embodiment import piper_dh

ASSET_DIR = Path(__file__).parent


@dataclass(frozen=True)
class Embodiment:
    """One arm's description; the world loads it twice (left and right).

    Attributes:
        urdf_path / srdf_path: the files (the SRDF lists link pairs never collision-checked).
        ee_link: the reported end-effector frame (x = approach, y = finger opening), ``tcp_offset_m`` behind
            the grasp centre.
        tcp_link: the grasp-centre frame.
        arm_joints: the planned joints, base to wrist.
        finger_joints: prismatic finger joints (0 = closed, ``finger_travel_m`` = fully open).
        home_qpos_rad: the arm joints' rest configuration (``back_to_origin``).
        finger_links: links whose contacts count as touching an object.
        hand_links: the links besides the fingers a held object may touch (the planner checks it against the rest).
        palm_to_tcp_m: from the palm (where the fingers start) to the grasp centre, along the approach.
        tcp_to_fingertip_m: from the grasp centre on to the fingertips.
    """

    urdf_path: Path
    srdf_path: Path
    ee_link: str = "ee_link"
    tcp_link: str = "tcp"
    arm_joints: tuple[str, ...] = piper_dh.ARM_JOINTS
    finger_joints: tuple[str, ...] = piper_dh.FINGER_JOINTS
    finger_links: tuple[str, ...] = ("left_finger", "right_finger")
    hand_links: tuple[str, ...] = ("link6", "gripper_base")
    finger_travel_m: float = piper_dh.FINGER_TRAVEL_M
    tcp_offset_m: float = piper_dh.TCP_OFFSET_M - piper_dh.EE_OFFSET_M
    palm_to_tcp_m: float = piper_dh.TCP_OFFSET_M - piper_dh.FINGER_BASE_M
    tcp_to_fingertip_m: float = piper_dh.FINGER_BASE_M + piper_dh.FINGER_LENGTH_M - piper_dh.TCP_OFFSET_M
    home_qpos_rad: tuple[float, ...] = field(default=(0.0, 1.439, -0.484, 0.0, 0.703, 0.0))

    def __post_init__(self) -> None:
        for p in (self.urdf_path, self.srdf_path):
            if not Path(p).is_file():
                raise FileNotFoundError(f"embodiment file not found: {p}")
        if len(self.home_qpos_rad) != len(self.arm_joints):
            raise ValueError(
                f"home_qpos_rad has {len(self.home_qpos_rad)} values for {len(self.arm_joints)} arm joints"
            )
        if self.finger_travel_m <= 0:
            raise ValueError("finger_travel_m must be positive")
        if self.palm_to_tcp_m <= 0:
            raise ValueError("palm_to_tcp_m must be positive")


def default_embodiment() -> Embodiment:
    """The self-authored Piper-kinematics arm shipped with mallvi."""
    return Embodiment(urdf_path=ASSET_DIR / "piper_arm.urdf", srdf_path=ASSET_DIR / "piper_arm.srdf")
