"""A Station's camera lifecycle: a stopped camera delivers no frames until restarted, a closed one never again."""

from __future__ import annotations

import numpy as np
import pytest

from mallvi.contracts.errors import DeviceNotConnectedError, StaleFrameError
from mallvi.contracts.observation import Observation
from mallvi.contracts.station import FunctionCamera


def _frame() -> Observation:
    return Observation(rgb=np.zeros((4, 6, 3), np.uint8), depth_m=np.ones((4, 6), np.float32), K=np.eye(3),
                       T_world_cam=np.eye(4), camera="cam", stamp=0.0)


def test_stop_pauses_the_stream_start_resumes_it_and_close_ends_it() -> None:
    opened: list[str] = []
    cam = FunctionCamera("cam", _frame, on_start=lambda: opened.append("start"),
                         on_stop=lambda: opened.append("stop"))
    with pytest.raises(StaleFrameError, match="not started"):
        cam.read()
    with cam:
        assert cam.read().rgb.shape == (4, 6, 3)
        cam.start()  # already started: the device is not opened twice
        cam.stop()
        with pytest.raises(StaleFrameError):
            cam.read()
        cam.start()
        assert cam.read().camera == "cam"
    assert opened == ["start", "stop", "start", "stop"]  # leaving the block closed it, releasing the device
    cam.close()  # idempotent
    with pytest.raises(DeviceNotConnectedError, match="closed"):
        cam.start()
