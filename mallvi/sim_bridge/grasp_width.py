"""How wide an object is where a parallel gripper would close on it: its extent along the finger axis through the
grasp centre, read by casting rays at the object's collision shapes.

A box tells an object's widest extent only; a bottle is 7–8.6 cm across its body and 3.2 cm across its neck. The
object is lifted far out of the scene for the casts (nothing else is hit) and put back where it was in the same
call, before any physics step.
"""

from __future__ import annotations

import numpy as np
import sapien
from numpy.typing import NDArray

from mallvi.sim_bridge.scene_spec import SimObject

ASIDE_M = 100.0  # the object is cast at this far above its place, clear of everything else
SPAN_M = 0.15  # rays start this far from the grasp centre, either way along the finger axis


def width_across_m(obj: SimObject, centre_world: NDArray[np.float64], fingers_world: NDArray[np.float64],
                   span_m: float = SPAN_M) -> float | None:
    """The object's extent along ``fingers_world`` (a direction) on the line through ``centre_world``: from the
    first surface met coming in from one side to the first from the other, within ``span_m`` of the centre. 0.0
    when the line misses it; None without a CPU physics system to cast in."""
    scene = obj.entity.scene
    system = scene.physx_system if scene is not None else None
    if not isinstance(system, sapien.physx.PhysxCpuSystem):
        return None
    u = np.asarray(fingers_world, dtype=float)
    u = u / max(1e-9, float(np.linalg.norm(u)))
    pose = obj.entity.get_pose()
    up = np.array([0.0, 0.0, ASIDE_M])
    obj.entity.set_pose(sapien.Pose(p=np.asarray(pose.p, dtype=float) + up, q=pose.q))
    try:
        c = np.asarray(centre_world, dtype=float) + up
        near: list[float] = []
        for sign in (1.0, -1.0):
            start = (c + sign * span_m * u).astype(np.float32)
            hit = system.raycast(start, (-sign * u).astype(np.float32), 2 * span_m)
            if hit is None:
                return 0.0
            near.append(float(hit.distance))
    finally:
        obj.entity.set_pose(pose)
    return max(0.0, 2 * span_m - near[0] - near[1])
