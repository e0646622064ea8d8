"""Grasp frames of simulated objects: where a parallel gripper may close on an object, best first.

A grasp frame is a world-frame pose at the grasp centre with x = the approach into the object and y = the finger
opening. Objects name their grasps as contact points ("cp0".."cpN"); each is also offered turned about the approach
(a parallel gripper is symmetric under that turn) and, for side grasps, tilted down; top-down grasps can be leaned
about the finger axis when none upright reaches, and a side grasp whose fingers open up and down (an object that
rolled onto its side) is turned to come from above when no other reaches.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from mallvi.contracts.geometry import Pose
from mallvi.contracts.world_model import ObjectInfo

LYING_TILT_COS = math.cos(math.radians(30))  # an object whose z axis is further than this from up is lying down
SIDE_GRASP_TILTS_DEG = (35, 55)  # extra tilted-down variants of side grasps
TOP_GRASP_LEANS_DEG = (25, 40)  # top-down grasps leaned about the finger axis, tried when none upright reaches
_FLIP_ABOUT_X = np.diag([1.0, -1.0, -1.0])  # a parallel gripper is symmetric under this rotation
ROLL_AXIS_LEVEL = 0.3  # a side grasp is turned to come from above where its third axis is this level (|z| part)


def frame_from(p: NDArray[np.float64], R: NDArray[np.float64]) -> Pose:
    """A pose from a position and a 3×3 rotation."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return Pose.from_matrix(T)


def leaned_top_grasps(frames: list[tuple[str, Pose]], lean_deg: int) -> list[tuple[str, Pose]]:
    """The top-down frames among ``frames``, each turned ±``lean_deg`` about its finger axis.

    The fingers still close on the same two faces at the same point; the approach leans towards or away from the
    arm, which brings objects at the back of the table or past the centre line within reach.
    """
    leaned: list[tuple[str, Pose]] = []
    for key, frame in frames:
        T = frame.as_matrix()
        if T[2, 0] > -0.9:  # not a top-down approach
            continue
        for sign, tag in ((1.0, "a"), (-1.0, "b")):
            R = Rotation.from_rotvec(sign * math.radians(lean_deg) * T[:3, 1]).as_matrix() @ T[:3, :3]
            leaned.append((f"{key}_lean{lean_deg}{tag}", frame_from(T[:3, 3], R)))
    return leaned


def rolled_top_grasps(frames: list[tuple[str, Pose]]) -> list[tuple[str, Pose]]:
    """The side grasps among ``frames`` whose fingers open up and down, each turned about the axis across its
    approach and fingers until it approaches straight down, at the same point: the fingers then close along the old
    approach. An object that rolled onto its side (a loaf, a can) turns its model's grasps with it, so that they
    come from the side with a finger under it; where it is about as deep as it was wide, the same point is held
    from above."""
    rolled: list[tuple[str, Pose]] = []
    down = np.array([0.0, 0.0, -1.0])
    for key, frame in frames:
        T = frame.as_matrix()
        R = T[:3, :3]
        if R[2, 0] < -0.9 or abs(R[2, 2]) > ROLL_AXIS_LEVEL:  # top-down already, or the turn would not reach down
            continue
        axis = R[:, 2]
        approach = down - axis * float(axis @ down)
        approach /= np.linalg.norm(approach)
        rolled.append((f"{key}_rolled", frame_from(T[:3, 3], np.column_stack([approach, np.cross(axis, approach),
                                                                              axis]))))
    return rolled


def bottom_of_lying(info: ObjectInfo, local_points: dict[str, Any]) -> NDArray[np.float64] | None:
    """The centre of the lowest face of the object's box when it is not standing upright, else None."""
    T = info.pose.as_matrix()
    if T[2, 2] >= LYING_TILT_COS:
        return None
    half = 0.5 * np.asarray(info.size_m, dtype=float)
    centre_local = np.array([0.0, 0.0, half[2]])
    if "bbox_center" in local_points:
        centre_local = np.asarray(local_points["bbox_center"].p, dtype=float)
    centre = T[:3, 3] + T[:3, :3] @ centre_local
    vertical_half = float(np.abs(T[2, :3]) @ half)
    return np.asarray(centre - np.array([0.0, 0.0, vertical_half]), dtype=float)


def grasp_frames(info: ObjectInfo, contact_point_id: int | None) -> list[tuple[str, Pose]] | str:
    """World grasp frames (x = approach into the object, y = finger opening) to try, best first."""
    cps = {k: v for k, v in info.points.items() if k.startswith("cp")}
    if contact_point_id is not None:
        key = f"cp{contact_point_id}"
        if key not in cps:
            return f"{info.name} has no contact point {contact_point_id}; it has {sorted(cps)}"
        cps = {key: cps[key]}
    frames: list[tuple[str, Pose]] = []
    if cps:
        for key in sorted(cps, key=lambda k: int(k[2:]) if k[2:].isdigit() else 999):
            T = cps[key].as_matrix()
            frames.append((key, cps[key]))
            frames.append((key + "_flipped", frame_from(T[:3, 3], T[:3, :3] @ _FLIP_ABOUT_X)))
        # Side grasps (horizontal approach) are out of reach for pedestal-mounted arms below ~1 m; the same
        # grasp tilted down about the finger axis closes on the same point and usually is reachable.
        for key, frame in list(frames):
            T = frame.as_matrix()
            if abs(T[2, 0]) > 0.3:
                continue
            sign = 1.0 if T[2, 2] >= 0 else -1.0
            for tilt_deg in SIDE_GRASP_TILTS_DEG:
                R_tilt = Rotation.from_euler("y", sign * math.radians(tilt_deg)).as_matrix()
                frames.append((f"{key}_tilt{tilt_deg}", frame_from(T[:3, 3], T[:3, :3] @ R_tilt)))
        return frames
    # No contact points: four top-down grasps at the centre, finger axis along the object's x or y.
    T_obj = info.pose.as_matrix()
    centre = T_obj[:3, 3] + T_obj[:3, 2] * info.size_m[2] / 2
    yaw0 = math.atan2(T_obj[1, 0], T_obj[0, 0])
    for k in range(4):
        yaw = yaw0 + k * math.pi / 2
        R = np.array([[0.0, math.cos(yaw), math.sin(yaw)], [0.0, math.sin(yaw), -math.cos(yaw)], [-1.0, 0.0, 0.0]])
        frames.append((f"top{k}", frame_from(centre, R)))
    return frames
