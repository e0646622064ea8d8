"""A synthetic RealSense: pyrealsense2's ``software_device`` with a depth and a colour sensor feeding an ``rs.syncer``.

Used by the tests and by ``scripts/`` to make small recordings: frames pushed here travel through the real
librealsense frame pipeline (syncer, align, recorder), so code reading them sees what it sees on a device.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray


def _intrinsics(rs: Any, K: NDArray[np.float64], width: int, height: int) -> Any:
    intr = rs.intrinsics()
    intr.width, intr.height = width, height
    intr.fx, intr.fy, intr.ppx, intr.ppy = float(K[0, 0]), float(K[1, 1]), float(K[0, 2]), float(K[1, 2])
    intr.model = rs.distortion.none
    intr.coeffs = [0.0] * 5
    return intr


class SyntheticRealSense:
    """A software RealSense with aligned-capable depth (z16) and colour (rgb8) streams.

    Args:
        width, height: image size of both streams.
        K_color, K_depth: 3×3 intrinsics of the colour and the depth stream.
        T_color_depth: 4×4 transform from the depth camera frame to the colour camera frame (OpenCV axes).
        depth_scale_m: metres per z16 unit.
        record_to: when set, everything pushed is also recorded to this file (``.db3``).
    """

    def __init__(self, width: int, height: int, K_color: NDArray[np.float64], K_depth: NDArray[np.float64],
                 T_color_depth: NDArray[np.float64] | None = None, depth_scale_m: float = 0.001,
                 record_to: str | None = None, fps: int = 30) -> None:
        import pyrealsense2 as rs

        self._rs = rs
        self.width, self.height, self.depth_scale_m = width, height, depth_scale_m
        dev = rs.software_device()
        dev.register_info(rs.camera_info.name, "Synthetic RealSense")
        dev.register_info(rs.camera_info.serial_number, "000000000000")
        dev.register_info(rs.camera_info.product_line, "D400")
        self._depth_sensor = dev.add_sensor("Depth")
        self._color_sensor = dev.add_sensor("Color")
        self._depth_profile = self._depth_sensor.add_video_stream(
            self._stream(rs.stream.depth, 0, 2, rs.format.z16, _intrinsics(rs, K_depth, width, height), fps))
        self._depth_sensor.add_read_only_option(rs.option.depth_units, depth_scale_m)
        self._color_profile = self._color_sensor.add_video_stream(
            self._stream(rs.stream.color, 1, 3, rs.format.rgb8, _intrinsics(rs, K_color, width, height), fps))
        T = np.eye(4) if T_color_depth is None else np.asarray(T_color_depth, dtype=float)
        extr = rs.extrinsics()
        extr.rotation = [float(v) for v in T[:3, :3].T.flatten()]  # librealsense stores it column-major
        extr.translation = [float(v) for v in T[:3, 3]]
        self._depth_profile.register_extrinsics_to(self._color_profile, extr)
        dev.create_matcher(rs.matchers.dlr_c)
        self._recorder = rs.recorder(record_to, dev) if record_to is not None else None
        self._device = dev
        self.syncer = rs.syncer()
        self._depth_sensor.open(self._depth_profile)
        self._color_sensor.open(self._color_profile)
        self._depth_sensor.start(self.syncer)
        self._color_sensor.start(self.syncer)
        self._frames: list[Any] = []  # keep pixel buffers alive until librealsense is done with them
        self._fps = fps
        self._primed = False

    def _stream(self, kind: Any, uid: int, bpp: int, fmt: Any, intr: Any, fps: int) -> Any:
        vs = self._rs.video_stream()
        vs.type, vs.index, vs.uid = kind, 0, uid
        vs.width, vs.height, vs.fps, vs.bpp, vs.fmt, vs.intrinsics = self.width, self.height, fps, bpp, fmt, intr
        return vs

    def push(self, rgb: NDArray[np.uint8], depth_m: NDArray[np.floating[Any]], frame_number: int,
             timestamp_ms: float, host_clock: bool = False, depth_timestamp_ms: float | None = None) -> None:
        """Send one colour image and one depth image (metres, 0 = invalid) into the device.

        ``host_clock`` stamps the frames in the system-time domain (ms since the epoch), else the hardware clock.
        Hardware-clock stamps should count from 0 like a freshly started device (e.g. ``33.0 * frame_number``):
        with librealsense 2.59 the syncer was seen not to pair frames whose hardware stamps start far from 0.
        """
        rs = self._rs
        depth_raw = np.round(np.asarray(depth_m, dtype=np.float64) / self.depth_scale_m).clip(0, 65535)
        domain = rs.timestamp_domain.system_time if host_clock else rs.timestamp_domain.hardware_clock
        depth_raw_u16 = depth_raw.astype(np.uint16)
        pairs = [(self._depth_sensor, self._depth_profile, depth_raw_u16, 2,
                  timestamp_ms if depth_timestamp_ms is None else depth_timestamp_ms, frame_number),
                 (self._color_sensor, self._color_profile, np.ascontiguousarray(rgb, dtype=np.uint8), 3, timestamp_ms,
                  frame_number)]
        if not self._primed:
            # librealsense's syncer drops or emits unpaired the first frame of each stream while it learns which
            # streams exist; one blank pair one period earlier makes every pushed pair come out as a pair.
            before_ms, before_n = timestamp_ms - 1000.0 / self._fps, frame_number - 1
            blank_rgb = np.zeros((self.height, self.width, 3), np.uint8)
            pairs[:0] = [
                (self._depth_sensor, self._depth_profile, np.zeros_like(depth_raw_u16), 2, before_ms, before_n),
                (self._color_sensor, self._color_profile, blank_rgb, 3, before_ms, before_n),
            ]
            self._primed = True
        for sensor, profile, pixels, bpp, stamp, number in pairs:
            frame = rs.software_video_frame()
            frame.pixels = pixels
            frame.stride = self.width * bpp
            frame.bpp = bpp
            frame.timestamp = stamp
            frame.domain = domain
            frame.frame_number = number
            frame.profile = profile.as_video_stream_profile()
            if bpp == 2:
                frame.depth_units = self.depth_scale_m
            self._frames.append(pixels)
            sensor.on_video_frame(frame)
        del self._frames[:-8]

    def close(self) -> None:
        """Stop the sensors and finish the recording file, if any."""
        for sensor in (self._depth_sensor, self._color_sensor):
            sensor.stop()
            sensor.close()
        self._recorder = None
