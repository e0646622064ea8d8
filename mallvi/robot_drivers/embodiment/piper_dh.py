"""Kinematics of the default arm: the AgileX Piper's modified (Craig) DH parameters, and the URDF/SRDF built from them.

Each joint's origin is Rx(alpha)·Tx(a)·Rz(offset)·Tz(d); the joint then rotates about its local z. Lengths in
metres, angles in radians. The URDF adds primitive collision shapes, a parallel-jaw gripper (two prismatic
fingers opening along the flange's y axis) and two fixed frames:

- ``ee_link``: 0.01 m past the flange, x = approach (the flange's z), y = finger-opening direction. This is the
  reported end-effector pose, 0.12 m behind the grasp centre.
- ``tcp``: the grasp centre, 0.13 m past the flange, same orientation as ``ee_link``.

``python -m mallvi.robot_drivers.embodiment.piper_dh`` rewrites ``piper_arm.urdf`` and ``piper_arm.srdf``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.robot_drivers.piper.piper_kinematics import (  # noqa: F401  (re-exported: the URDF is built from them)
    A_M,
    ALPHA_RAD,
    D_M,
    JOINT_LIMITS_RAD,
    OFFSET_RAD,
    dh_fk,
    joint_origin,
)

FINGER_TRAVEL_M = 0.04  # per finger; full opening 0.08 m
EE_OFFSET_M = 0.01  # ee_link past the flange
TCP_OFFSET_M = 0.13  # grasp centre past the flange
FINGER_BASE_M = 0.07  # where the fingers start past the flange
FINGER_LENGTH_M = 0.07
ARM_JOINTS = tuple(f"joint{i}" for i in range(1, 7))
FINGER_JOINTS = ("left_finger_joint", "right_finger_joint")


def _origin_xml(T: NDArray[np.float64]) -> str:
    rpy = Rotation.from_matrix(T[:3, :3]).as_euler("xyz")  # URDF rpy: fixed-axis x, y, z
    xyz = " ".join(f"{v:.6f}" for v in T[:3, 3])
    return f'<origin xyz="{xyz}" rpy="{" ".join(f"{v:.6f}" for v in rpy)}"/>'


def _box(center: tuple[float, float, float], size: tuple[float, float, float], color: str) -> str:
    c = " ".join(f"{v:.4f}" for v in center)
    s = " ".join(f"{v:.4f}" for v in size)
    geom = f'<origin xyz="{c}" rpy="0 0 0"/><geometry><box size="{s}"/></geometry>'
    return f'<visual>{geom}<material name="{color}"/></visual><collision>{geom}</collision>'


def _link(name: str, shapes: list[str], mass_kg: float = 0.4) -> str:
    inertia = '<inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/>'
    body = "\n    ".join(shapes)
    return (
        f'  <link name="{name}">\n    <inertial><origin xyz="0 0 0"/><mass value="{mass_kg}"/>{inertia}</inertial>\n'
        f"    {body}\n  </link>\n"
    )


_SHAPES: dict[str, list[tuple[tuple[float, float, float], tuple[float, float, float], str]]] = {
    "base_link": [((0, 0, 0.055), (0.09, 0.09, 0.11), "dark")],
    "link1": [((0, 0, -0.01), (0.07, 0.07, 0.04), "grey")],
    "link2": [((0.1425, 0, 0), (0.30, 0.055, 0.055), "light")],
    "link3": [((-0.011, 0, 0), (0.07, 0.06, 0.05), "grey"), ((-0.022, -0.13, 0), (0.045, 0.21, 0.045), "light")],
    "link4": [((0, 0, 0), (0.045, 0.045, 0.045), "grey")],
    "link5": [((0, -0.03, 0), (0.04, 0.05, 0.04), "grey")],
    "link6": [((0, 0, -0.02), (0.05, 0.05, 0.04), "dark")],
    "gripper_base": [((0, 0, 0.045), (0.045, 0.11, 0.05), "dark")],
    "left_finger": [((0, 0.006, FINGER_LENGTH_M / 2), (0.02, 0.012, FINGER_LENGTH_M), "grey")],
    "right_finger": [((0, -0.006, FINGER_LENGTH_M / 2), (0.02, 0.012, FINGER_LENGTH_M), "grey")],
}


def build_urdf(name: str = "piper_arm") -> str:
    """The arm's URDF text (primitive boxes, self-contained, no meshes)."""
    materials = (
        '  <material name="dark"><color rgba="0.15 0.15 0.17 1"/></material>\n'
        '  <material name="grey"><color rgba="0.55 0.56 0.58 1"/></material>\n'
        '  <material name="light"><color rgba="0.85 0.85 0.87 1"/></material>\n'
    )
    parts = [f'<?xml version="1.0"?>\n<robot name="{name}">\n', materials]
    for link_name, shapes in _SHAPES.items():
        parts.append(_link(link_name, [_box(c, s, col) for c, s, col in shapes]))
    parts.append(_link("ee_link", [], 0.01))
    parts.append(_link("tcp", [], 0.01))
    chain = ["base_link", "link1", "link2", "link3", "link4", "link5", "link6"]
    for i in range(6):
        lo, hi = JOINT_LIMITS_RAD[i]
        parts.append(
            f'  <joint name="{ARM_JOINTS[i]}" type="revolute">\n'
            f'    <parent link="{chain[i]}"/><child link="{chain[i + 1]}"/>\n'
            f'    {_origin_xml(joint_origin(i))}\n    <axis xyz="0 0 1"/>\n'
            f'    <limit lower="{lo}" upper="{hi}" effort="100" velocity="3.0"/>\n  </joint>\n'
        )
    fixed = [
        ("gripper_joint", "link6", "gripper_base", "0 0 0", "0 0 0"),
        ("ee_joint", "link6", "ee_link", f"0 0 {EE_OFFSET_M}", f"0 {-math.pi / 2:.6f} 0"),
        ("tcp_joint", "link6", "tcp", f"0 0 {TCP_OFFSET_M}", f"0 {-math.pi / 2:.6f} 0"),
    ]
    for jname, parent, child, xyz, rpy in fixed:
        parts.append(
            f'  <joint name="{jname}" type="fixed">\n    <parent link="{parent}"/><child link="{child}"/>\n'
            f'    <origin xyz="{xyz}" rpy="{rpy}"/>\n  </joint>\n'
        )
    for jname, child, axis in (
        (FINGER_JOINTS[0], "left_finger", "0 1 0"),
        (FINGER_JOINTS[1], "right_finger", "0 -1 0"),
    ):
        parts.append(
            f'  <joint name="{jname}" type="prismatic">\n    <parent link="gripper_base"/><child link="{child}"/>\n'
            f'    <origin xyz="0 0 {FINGER_BASE_M}" rpy="0 0 0"/>\n    <axis xyz="{axis}"/>\n'
            f'    <limit lower="0" upper="{FINGER_TRAVEL_M}" effort="40" velocity="0.2"/>\n  </joint>\n'
        )
    parts.append("</robot>\n")
    return "".join(parts)


_NO_COLLISION = [
    ("base_link", "link1"), ("base_link", "link2"), ("link1", "link2"), ("link1", "link3"), ("link2", "link3"),
    ("link3", "link4"), ("link3", "link5"), ("link4", "link5"), ("link4", "link6"), ("link5", "link6"),
    ("link5", "gripper_base"), ("link6", "gripper_base"), ("gripper_base", "left_finger"),
    ("gripper_base", "right_finger"), ("left_finger", "right_finger"), ("link6", "left_finger"),
    ("link6", "right_finger"),
]  # fmt: skip


def build_srdf(name: str = "piper_arm") -> str:
    """The SRDF: pairs of links that touch by construction and are never collision-checked."""
    rows = "".join(f'  <disable_collisions link1="{a}" link2="{b}" reason="Adjacent"/>\n' for a, b in _NO_COLLISION)
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{rows}</robot>\n'


def write_assets(folder: Path) -> tuple[Path, Path]:
    """Write piper_arm.urdf / piper_arm.srdf into ``folder``; returns both paths."""
    urdf, srdf = folder / "piper_arm.urdf", folder / "piper_arm.srdf"
    urdf.write_text(build_urdf())
    srdf.write_text(build_srdf())
    return urdf, srdf


if __name__ == "__main__":
    write_assets(Path(__file__).parent)
