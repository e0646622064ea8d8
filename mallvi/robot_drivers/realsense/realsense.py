"""Intel RealSense RGB-D camera through pyrealsense2: colour + depth aligned to colour -> ``Observation``.

The camera reads from any pyrealsense2 frame source that offers ``try_wait_for_frames`` and ``poll_for_frames``:
an ``rs.pipeline`` on a live device or on a recording (``.db3``/``.bag`` via ``enable_device_from_file``), or an
``rs.syncer`` fed by a ``software_device`` (tests). Missing, repeated, old or mismatched frames raise
StaleFrameError with a message that says which check failed.
"""

from __future__ import annotations

import logging
import time
from types import TracebackType
from typing import Any, Self

import numpy as np
from numpy.typing import NDArray

from mallvi.contracts.devices import Camera
from mallvi.contracts.errors import DeviceNotConnectedError, StaleFrameError
from mallvi.contracts.observation import Observation
from mallvi.robot_drivers.realsense.config_realsense import RealSenseConfig

log = logging.getLogger(__name__)

PLAYBACK_QUEUE_SIZE = 256  # frames buffered between the playback device and read()


def depth_to_metres(depth_raw: NDArray[np.uint16], depth_scale_m: float, min_m: float, max_m: float
                    ) -> NDArray[np.float32]:
    """Raw z16 depth times the depth scale -> metres (float32); 0 and out-of-range pixels become 0."""
    depth_m = depth_raw.astype(np.float32) * np.float32(depth_scale_m)
    depth_m[(depth_m < min_m) | (depth_m > max_m)] = 0.0
    return depth_m


def K_from_intrinsics(intr: Any) -> NDArray[np.float64]:
    """rs.intrinsics -> 3×3 OpenCV camera matrix."""
    return np.array([[intr.fx, 0.0, intr.ppx], [0.0, intr.fy, intr.ppy], [0.0, 0.0, 1.0]], dtype=float)


class RealSenseCamera(Camera):
    """A calibrated RealSense camera.

    Args:
        config: stream and staleness settings.
        T_world_cam: pose of the colour camera's OpenCV frame in the world (from ``mallvi calibrate``).
        source: an already running frame source (rs.syncer/rs.pipeline); None: start() opens one from config.
    """

    def __init__(self, config: RealSenseConfig, T_world_cam: NDArray[np.float64], source: Any | None = None):
        T = np.asarray(T_world_cam, dtype=float)
        if T.shape != (4, 4) or not np.all(np.isfinite(T)):
            raise ValueError("T_world_cam must be a finite 4x4 matrix")
        self.config = config
        self.name = config.name
        self.T_world_cam = T
        self._source = source
        self._owns_source = source is None
        self._pipeline: Any = None
        self._playback_sensors: list[Any] = []
        self._playback_device: Any = None
        self._align: Any = None
        self._last_frame_number: int | None = None
        self._last_timestamp_ms: float | None = None

    def start(self) -> None:
        """Open the device or the recording (no-op when a source was given)."""
        import pyrealsense2 as rs

        self._align = rs.align(rs.stream.color)
        if self._source is not None:
            return
        c = self.config
        if c.recording_path is not None:
            self._start_playback(rs, c.recording_path)
            return
        cfg = rs.config()
        if c.serial is not None:
            cfg.enable_device(c.serial)
        cfg.enable_stream(rs.stream.depth, c.width, c.height, rs.format.z16, c.fps)
        cfg.enable_stream(rs.stream.color, c.width, c.height, rs.format.rgb8, c.fps)
        pipeline = rs.pipeline()
        try:
            pipeline.start(cfg)
        except RuntimeError as e:
            raise DeviceNotConnectedError(f"cannot open RealSense {c.serial or '(any)'}: {e}. Is the camera on a "
                                          "USB 3 port and not in use by another program (realsense-viewer)?") from e
        self._pipeline = pipeline
        self._source = pipeline

    def _start_playback(self, rs: Any, path: str) -> None:
        # Paused while the sensors start, then frame by frame (not real time): every recorded pair is delivered.
        try:
            device = rs.context().load_device(path)
        except RuntimeError as e:
            raise DeviceNotConnectedError(f"cannot play recording {path!r}: {e}") from e
        playback = device.as_playback()
        playback.set_real_time(False)
        playback.pause()
        syncer = rs.syncer(PLAYBACK_QUEUE_SIZE)
        sensors = device.query_sensors()
        for sensor in sensors:
            sensor.open(sensor.get_stream_profiles())
            sensor.start(syncer)
        playback.resume()
        self._playback_sensors = sensors
        self._playback_device = device
        self._source = syncer

    def stop(self) -> None:
        if self._pipeline is not None:
            self._pipeline.stop()
            self._pipeline = None
        for sensor in self._playback_sensors:
            sensor.stop()
            sensor.close()
        self._playback_sensors = []
        self._playback_device = None
        if self._owns_source:
            self._source = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def read(self) -> Observation:
        """The newest aligned frame pair as an Observation; raises StaleFrameError if none is usable in time."""
        if self._source is None or self._align is None:
            raise DeviceNotConnectedError(f"camera {self.name!r} is not started; call start() first")
        depth, color = self._newest_pair()
        self._check_fresh(depth, color)
        intr = color.profile.as_video_stream_profile().intrinsics
        rgb = np.array(color.get_data(), dtype=np.uint8, copy=True)
        if rgb.ndim != 3 or rgb.shape[2] != 3:
            raise StaleFrameError(f"camera {self.name!r}: colour frame has shape {rgb.shape}, expected HxWx3 rgb8")
        if str(color.profile.format()).endswith("bgr8"):
            rgb = rgb[:, :, ::-1].copy()
        depth_m = depth_to_metres(np.asarray(depth.get_data(), dtype=np.uint16), float(depth.get_units()),
                                  self.config.min_depth_m, self.config.max_depth_m)
        return Observation(rgb=rgb, depth_m=depth_m, K=K_from_intrinsics(intr), T_world_cam=self.T_world_cam.copy(),
                           camera=self.name, stamp=time.monotonic())

    # ---- helpers ---------------------------------------------------------------------------------------------
    def _newest_pair(self) -> tuple[Any, Any]:
        source = self._source
        assert source is not None
        deadline = time.monotonic() + self.config.timeout_s
        newest = None
        live = self.config.recording_path is None  # a recording is read frame by frame, in order
        while live:  # drain what is queued and keep the newest complete pair
            fs = source.poll_for_frames()
            if not fs:
                break
            pair = self._split(fs)
            if pair is not None:
                newest = pair
        while newest is None:
            remaining_ms = int((deadline - time.monotonic()) * 1000)
            if remaining_ms <= 0:
                raise StaleFrameError(f"camera {self.name!r}: no depth+colour frame pair within "
                                      f"{self.config.timeout_s} s (unplugged, USB bandwidth, or end of recording?)")
            ok, fs = source.try_wait_for_frames(remaining_ms)
            if ok:
                newest = self._split(fs)
        return newest

    def _split(self, frameset: Any) -> tuple[Any, Any] | None:
        fs = frameset.as_frameset()
        if fs.size() < 2 or not fs.get_depth_frame() or not fs.get_color_frame():
            return None
        aligned = self._align.process(fs)
        depth, color = aligned.get_depth_frame(), aligned.get_color_frame()
        if not depth or not color:
            return None
        return depth, color

    def _check_fresh(self, depth: Any, color: Any) -> None:
        import pyrealsense2 as rs

        number = int(color.get_frame_number())
        stamp_ms = float(color.get_timestamp())
        if self._last_frame_number is not None and number <= self._last_frame_number:
            raise StaleFrameError(f"camera {self.name!r}: colour frame number {number} does not advance "
                                  f"(last {self._last_frame_number}); the stream is stuck")
        if self._last_timestamp_ms is not None and stamp_ms <= self._last_timestamp_ms:
            raise StaleFrameError(f"camera {self.name!r}: frame timestamp {stamp_ms:.1f} ms does not advance")
        skew_ms = abs(float(depth.get_timestamp()) - stamp_ms)
        if skew_ms > self.config.max_depth_color_skew_ms:
            raise StaleFrameError(f"camera {self.name!r}: depth and colour frames are {skew_ms:.0f} ms apart "
                                  f"(limit {self.config.max_depth_color_skew_ms} ms)")
        if color.get_frame_timestamp_domain() in (rs.timestamp_domain.system_time, rs.timestamp_domain.global_time):
            age_s = time.time() - stamp_ms / 1000.0
            if age_s > self.config.max_frame_age_s:
                raise StaleFrameError(f"camera {self.name!r}: newest frame is {age_s:.2f} s old "
                                      f"(limit {self.config.max_frame_age_s} s)")
        self._last_frame_number = number
        self._last_timestamp_ms = stamp_ms
