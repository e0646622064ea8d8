"""Suite-wide fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

# Lives until the interpreter exits: freeing this scene explicitly at session teardown has crashed SAPIEN.
_KEEPALIVE: list[Any] = []


@pytest.fixture(scope="session", autouse=True)
def sapien_render_keepalive() -> Iterator[None]:
    """Keep one tiny camera scene alive for the whole run.

    SAPIEN tears its Vulkan render context down when the last scene with a camera is freed; re-creating it costs
    seconds on the CPU renderer (lavapipe), and freeing several camera scenes back to back has crashed it. With
    one scene alive for the session, every render test reuses the same context.
    """
    import sapien

    scene = sapien.Scene()
    camera = scene.add_camera("keepalive", 8, 8, 1.0, 0.01, 10.0)
    scene.update_render()
    camera.take_picture()
    _KEEPALIVE.extend([scene, camera])
    yield
