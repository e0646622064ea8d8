"""Episode videos: a simulated camera's frames encoded to MP4 (H.264) as they come, with the ffmpeg binary that
the ``imageio-ffmpeg`` wheel ships (no system package).

Frames come from what the run renders anyway plus a few during motions (``tap_world``): every observation the run
makes of the recorded camera is kept (free), and while the arms move one more frame is rendered every
``STEPS_PER_FRAME`` physics steps (0.2 s of simulated time at 250 Hz). The video plays at ``FPS`` = 5 frames per
second, so motions play at the speed they were simulated; the moments the agents look and think add the frames
they rendered. An unchanged frame is not written twice. Each frame's Unix time is kept (``frame_t``) so the
viewer can seek the video to the moment a timeline bar starts.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mallvi.tracing.trace import TraceWriter

log = logging.getLogger(__name__)

#: physics steps (of 1/250 s) between two frames rendered during a motion
STEPS_PER_FRAME = 50
#: playback frames per second: 250 Hz / STEPS_PER_FRAME, so motions play in real (simulated) time
FPS = 5
#: where a run's video goes inside its trace directory
VIDEO_DIR = "video"


class VideoError(RuntimeError):
    """The video could not be encoded (no encoder, a frame of another size, ffmpeg failed)."""


class VideoRecorder:
    """Encodes RGB frames of one size into an MP4 as they are added; ``close()`` finishes the file."""

    def __init__(self, path: str | Path, fps: float = FPS) -> None:
        self.path = Path(path)
        self.fps = fps
        self.frame_t: list[float] = []
        self._writer: Any = None
        self._size: tuple[int, int] | None = None
        self._last: NDArray[np.uint8] | None = None

    @property
    def frames(self) -> int:
        return len(self.frame_t)

    def add(self, rgb: NDArray[np.uint8], t: float | None = None) -> bool:
        """Append one frame (H x W x 3, uint8) taken at Unix time ``t``; False when it equals the last one."""
        frame = np.ascontiguousarray(rgb[..., :3], dtype=np.uint8)
        if self._last is not None and self._last.shape == frame.shape and np.array_equal(self._last, frame):
            return False
        height, width = frame.shape[:2]
        if self._writer is None:
            self._start(width, height)
        elif self._size != (width, height):
            raise VideoError(f"frame of {width}x{height} in a {self._size[0]}x{self._size[1]} video")  # type: ignore[index]
        try:
            self._writer.send(frame)
        except (OSError, RuntimeError) as e:  # ffmpeg exited
            raise VideoError(f"encoding {self.path.name} failed: {e}") from e
        self._last = frame
        self.frame_t.append(time.time() if t is None else t)
        return True

    def _start(self, width: int, height: int) -> None:
        try:
            import imageio_ffmpeg
        except ImportError as e:  # pragma: no cover - a locked dependency
            raise VideoError("--video needs imageio-ffmpeg (pip install imageio-ffmpeg)") from e
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._size = (width, height)
        self._writer = imageio_ffmpeg.write_frames(
            str(self.path), (width, height), fps=self.fps, codec="libx264", pix_fmt_out="yuv420p", quality=6,
            macro_block_size=2, ffmpeg_log_level="error", output_params=["-movflags", "+faststart"])
        self._writer.send(None)  # start ffmpeg

    def close(self) -> dict[str, Any] | None:
        """Finish the file; what the trace's ``video`` event says of it, None when no frame was added."""
        if self._writer is None:
            return None
        writer, self._writer = self._writer, None
        try:
            writer.close()
        except (OSError, RuntimeError) as e:
            raise VideoError(f"finishing {self.path.name} failed: {e}") from e
        assert self._size is not None
        return {"fps": self.fps, "frames": self.frames, "width": self._size[0], "height": self._size[1],
                "frame_t": [round(t, 4) for t in self.frame_t]}


def tap_world(world: Any, recorder: VideoRecorder, camera: str = "head",
              steps_per_frame: int = STEPS_PER_FRAME) -> Callable[[], None]:
    """Feed ``recorder`` from a simulated world: each ``observe(camera)`` the run makes, and a render of
    ``camera`` every ``steps_per_frame`` physics steps. Returns the function that removes the tap.

    ``world`` is any object with ``observe(camera) -> obs`` (``obs.rgb``) and ``step(n)``, such as a SimWorld;
    the tap replaces those two on the instance (as ``bench.reuse`` does) and restores them when removed.
    """
    observe: Callable[..., Any] = world.observe
    step: Callable[..., Any] = world.step
    pending = [0]

    def observing(name: str = "head") -> Any:
        obs = observe(name)
        if name == camera:
            recorder.add(obs.rgb)
            pending[0] = 0
        return obs

    def stepping(n_steps: int = 1) -> None:
        step(n_steps)
        pending[0] += int(n_steps)
        if pending[0] >= steps_per_frame:
            pending[0] = 0
            recorder.add(observe(camera).rgb)

    world.observe, world.step = observing, stepping

    def untap() -> None:
        world.observe, world.step = observe, step

    return untap


@contextmanager
def record_world_video(world: Any, trace_dir: str | Path, trace: TraceWriter | None = None,
                       camera: str = "head") -> Iterator[VideoRecorder]:
    """Record ``camera`` of ``world`` into ``trace_dir/video/<camera>.mp4`` while the block runs; on the way out
    the file is finished and, with a ``trace``, a ``video`` event names it."""
    rel = f"{VIDEO_DIR}/{camera}.mp4"
    recorder = VideoRecorder(Path(trace_dir) / rel)
    untap = tap_world(world, recorder, camera)
    try:
        yield recorder
    finally:
        untap()
        info = recorder.close()
        if info is not None and trace is not None:
            trace.emit("video", camera=camera, path=rel, **info)


def count_frames(path: str | Path) -> int:
    """How many frames an MP4 holds, decoded with the same ffmpeg (what a test checks a video by)."""
    import imageio_ffmpeg

    reader = imageio_ffmpeg.read_frames(str(path))
    next(reader)  # the stream's metadata
    return sum(1 for _ in reader)
