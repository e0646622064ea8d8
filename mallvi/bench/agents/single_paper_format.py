"""Numbers as the original benchmark's info texts print them, and the grasp orientations they recommend.

The original prints Python lists with full float repr (``[-0.12, -0.15, 0.7234, 0, 1, 0, 0]``), object positions
as float32 numpy arrays (``[-0.15172  0.0223   0.77391]``), rounded values as numpy arrays, and ``sapien.Pose``
objects by their own repr. Quaternions are [w, x, y, z]; an end-effector frame has x along the approach and y
along the finger opening; [0.5, -0.5, 0.5, 0.5] points the gripper down with the fingers opening left-right.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import sapien
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

#: the original's "gripper pointing down, opening left-right" orientation [w, x, y, z]
DOWN_QUAT_WXYZ = (0.5, -0.5, 0.5, 0.5)


def py(values: Any) -> Any:
    """Numpy scalars and arrays as plain Python floats/lists (ints stay ints), for ``str`` as the original."""
    if isinstance(values, np.ndarray):
        return [py(v) for v in values.tolist()]
    if isinstance(values, list | tuple):
        return [py(v) for v in values]
    if isinstance(values, np.floating):
        return float(values)
    if isinstance(values, np.integer):
        return int(values)
    return values


def plist(values: Any) -> str:
    """A Python list as ``str`` prints it."""
    return str(py(values))


def f32(values: Sequence[float] | NDArray[Any]) -> str:
    """An object position as the original prints ``actor.get_pose().p`` (a float32 numpy array)."""
    return str(np.asarray(values, dtype=np.float32))


def rounded(values: Sequence[float] | NDArray[Any], digits: int, dtype: Any = np.float64) -> str:
    """``np.round(values, digits)`` as numpy prints it."""
    return str(np.round(np.asarray(values, dtype=dtype), digits))


def pose_repr(p: Sequence[float], q: Sequence[float]) -> str:
    """A pose as the original prints a ``sapien.Pose``."""
    return str(sapien.Pose([float(v) for v in p], [float(v) for v in q]))


def _wxyz(rot: Rotation) -> list[float]:
    x, y, z, w = rot.as_quat()
    return [float(w), float(x), float(y), float(z)]


def down_quat_opening_along(direction_xy: Sequence[float]) -> list[float]:
    """A top-down gripper orientation [w, x, y, z] whose fingers open along ``direction_xy`` (a table-plane
    direction), the one of the two (±) closest to ``DOWN_QUAT_WXYZ``: the original's ``compute_grasp_quat`` is
    this with the object's x axis."""
    w, x, y, z = DOWN_QUAT_WXYZ
    down = Rotation.from_quat([x, y, z, w])
    opening_down = down.as_matrix()[:, 1]  # (-1, 0, 0)
    best: list[float] | None = None
    for sign in (1.0, -1.0):
        d = sign * np.asarray(direction_xy[:2], dtype=float)
        angle = math.atan2(d[1], d[0]) - math.atan2(opening_down[1], opening_down[0])
        angle = math.atan2(math.sin(angle), math.cos(angle))
        if best is None or abs(angle) < best[0]:
            best = [abs(angle), angle]
    assert best is not None
    return _wxyz(Rotation.from_euler("z", best[1]) * down)


def axis_xy(q_wxyz: Sequence[float], axis: int) -> list[float]:
    """An object's local axis (0 = x, 1 = y) in the world, projected on the table plane."""
    w, x, y, z = (float(v) for v in q_wxyz)
    col = Rotation.from_quat([x, y, z, w]).as_matrix()[:, axis]
    n = math.hypot(col[0], col[1])
    return [1.0, 0.0] if n < 1e-6 else [col[0] / n, col[1] / n]
