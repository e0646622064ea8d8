"""How images reach a vision model: PNG data URLs."""

from __future__ import annotations

import base64
import io

import numpy as np
from numpy.typing import NDArray


def image_data_url(rgb: NDArray[np.uint8]) -> str:
    """A PNG data URL for an RGB image (how images reach a VLM)."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgb)).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
