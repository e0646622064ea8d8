"""Pinch frames on the rim of a lying hollow object, for ``upright_actor``'s swing (``upright.py``).

A mug's body (8 cm) fills the gripper's opening (8 cm): it cannot be taken across its body to swing upright. It is
pinched by its wall at the side of its opening instead, the fingers across the wall (one inside, one outside), the
hand coming in towards its bottom and leaned down; lifted by that pinch it swings bottom down about the finger axis
like an object held near its top end. The sides are the two spots of the rim level with the object's axis; a side
within ``HANDLE_CLEAR_DEG`` of the handle is left out (the fingers would meet it).

Probed in the simulator on mugs knocked onto their side in the hanging_mug scene: straight in along the axis (the
hand level) no arm had an inverse-kinematics solution; leaned down, a pinched mug hangs 10–20° off upright after
the swing, upright once the wrist turns it. On development seeds 1410000–1410011 the left arm stands 4 of 12 up;
for most others no pinch is reachable (1410000: its opening faces the back of the table).
"""

from __future__ import annotations

import math

import numpy as np

from mallvi.contracts.geometry import Pose
from mallvi.contracts.world_model import ObjectInfo
from mallvi.sim_bridge.grasp_frames import frame_from

RIM_POINT = "rim"  # the object model's point on its rim (the standing object's rim grasp)
LEANS_DEG = (60.0, 45.0, 30.0)  # the approach leaned this far down from the object's axis, in order
HANDLE_CLEAR_DEG = 30.0  # a side of the rim this near the handle's direction (about the axis) is not pinched


def rim_depth_m(info: ObjectInfo, height_m: float) -> float | None:
    """How far below the object's top end its rim point lies (along its axis), None without a rim point."""
    rim = info.points.get(RIM_POINT)
    if rim is None:
        return None
    T = info.pose.as_matrix()
    local = T[:3, :3].T @ (np.asarray(rim.p, dtype=float) - T[:3, 3])
    return max(0.0, height_m - float(local[2]))


def rim_pinch_frames(info: ObjectInfo) -> list[tuple[str, Pose]]:
    """Grasp frames (x = approach, y = finger opening) pinching the rim of the lying ``info`` at its sides, the one
    farther from its handle first, each at every lean of ``LEANS_DEG``; empty without a rim point."""
    rim = info.points.get(RIM_POINT)
    if rim is None:
        return []
    T = info.pose.as_matrix()
    R, origin = T[:3, :3], T[:3, 3]
    axis = R[:, 2]
    local = R.T @ (np.asarray(rim.p, dtype=float) - origin)
    radius = math.hypot(float(local[0]), float(local[1]))
    across = np.cross(axis, [0.0, 0.0, 1.0])
    if float(np.linalg.norm(across)) < 1e-6:  # standing or on its top: no side of the rim is level with its axis
        return []
    across /= float(np.linalg.norm(across))
    handle = info.points.get("handle")
    sides: list[tuple[float, str, np.ndarray]] = []
    for name, sign in (("rim_side_a", 1.0), ("rim_side_b", -1.0)):
        radial = sign * across
        clear = 180.0
        if handle is not None:
            h = np.asarray(handle.p, dtype=float) - origin
            h_out = h - axis * float(h @ axis)
            if float(np.linalg.norm(h_out)) > 1e-6:
                cos = float(np.clip(radial @ h_out / float(np.linalg.norm(h_out)), -1.0, 1.0))
                clear = math.degrees(math.acos(cos))
        if clear >= HANDLE_CLEAR_DEG:
            sides.append((clear, name, origin + axis * float(local[2]) + radius * radial))
    sides.sort(key=lambda s: -s[0])
    frames: list[tuple[str, Pose]] = []
    for _, name, p in sides:
        for lean in LEANS_DEG:
            b = math.radians(lean)
            approach = math.cos(b) * -axis + math.sin(b) * np.array([0.0, 0.0, -1.0])
            Rf = np.column_stack([approach, across, np.cross(approach, across)])
            frames.append((f"{name}_{lean:.0f}", frame_from(p, Rf)))
            frames.append((f"{name}_{lean:.0f}_flipped", frame_from(p, Rf @ np.diag([1.0, -1.0, -1.0]))))
    return frames
