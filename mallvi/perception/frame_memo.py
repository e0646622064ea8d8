"""Per-frame memo: what perception derives from one frame, computed once however often it is asked.

One frame is read by several stages (the detectors, the segmenters, ``describe`` and ``localize``, the Reflector's
check), and each used to recompute the frame's table height, height image and depth regions. ``per_frame`` keeps a
function's result for each live ``Observation`` object (by identity, never by a recycled ``id``) and each set of
further arguments, for the last few frames only. Observations are frozen and their arrays are never written
after capture, so a result stays valid for the frame's lifetime; an array result comes back read-only.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, ParamSpec, TypeVar

import numpy as np

from mallvi.contracts.observation import Observation

P = ParamSpec("P")
R = TypeVar("R")

#: frames whose results are kept (the newest; older ones are dropped, and a frame's results go with it)
FRAMES_KEPT = 4


class _Memo:
    """Results per live observation (oldest first), each under its arguments' key."""

    def __init__(self, frames: int) -> None:
        self._frames = frames
        self._lock = threading.RLock()  # a frame's weakref callback may run while it is held
        self._entries: OrderedDict[int, tuple[weakref.ref[Observation], dict[Hashable, Any]]] = OrderedDict()

    def get(self, obs: Observation, key: Hashable, compute: Callable[[], R]) -> R:
        with self._lock:
            entry = self._entries.get(id(obs))
            if entry is not None and entry[0]() is obs and key in entry[1]:
                self._entries.move_to_end(id(obs))
                result: R = entry[1][key]
                return result
        value = compute()  # outside the lock: two threads may compute the same frame once each, never wrongly
        if isinstance(value, np.ndarray):
            value.flags.writeable = False  # shared by every caller: a write would change the others' answers
        with self._lock:
            entry = self._entries.get(id(obs))
            if entry is None or entry[0]() is not obs:  # new, or an earlier frame's id reused by this one
                entry = (weakref.ref(obs, self._forget(id(obs))), {})
                self._entries[id(obs)] = entry
            entry[1][key] = value
            self._entries.move_to_end(id(obs))
            while len(self._entries) > self._frames:
                self._entries.popitem(last=False)
        return value

    def _forget(self, key: int) -> Callable[[weakref.ref[Observation]], None]:
        def drop(ref: weakref.ref[Observation]) -> None:
            with self._lock:
                entry = self._entries.get(key)
                if entry is not None and entry[0] is ref:
                    del self._entries[key]

        return drop


def per_frame(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn(obs, *args, **kwargs)`` computed once per observation (the first argument) and further arguments,
    which must be hashable."""
    memo = _Memo(FRAMES_KEPT)

    @functools.wraps(fn)
    def cached(*args: P.args, **kwargs: P.kwargs) -> R:
        obs, rest = args[0], args[1:]
        if not isinstance(obs, Observation):
            raise TypeError(f"{fn.__name__} takes an Observation first, got {type(obs).__name__}")
        key = (rest, tuple(sorted(kwargs.items())))
        return memo.get(obs, key, lambda: fn(*args, **kwargs))

    return cached
