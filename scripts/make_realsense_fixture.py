"""Write tests/fixtures/realsense/box_on_plane.db3: two frames of the synthetic RealSense test scene.

Run from the repository root: .venv/bin/python scripts/make_realsense_fixture.py
The scene and camera constants live in tests/integration/test_real_realsense.py, which plays the file back.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mallvi.robot_drivers.realsense.realsense_synthetic import SyntheticRealSense  # noqa: E402
from tests.integration.test_real_realsense import FIXTURE, K_COLOR, K_DEPTH, T_COLOR_DEPTH, H, W, render_scene  # noqa: E402


def main() -> None:
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.unlink(missing_ok=True)
    dev = SyntheticRealSense(W, H, K_COLOR, K_DEPTH, T_COLOR_DEPTH, record_to=str(FIXTURE))
    rgb, depth = render_scene()
    for n in (1, 2):
        dev.push(rgb, depth, frame_number=n, timestamp_ms=33.0 * n)
        _ok, _frames = dev.syncer.try_wait_for_frames(1000)  # consume, as a reader would
    dev.close()
    del dev
    sys.stderr.write(f"wrote {FIXTURE} ({FIXTURE.stat().st_size} bytes)\n")


if __name__ == "__main__":
    main()
