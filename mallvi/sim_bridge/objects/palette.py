"""The named colour palette shared by every object and scene (linear RGB, 0..1)."""

from __future__ import annotations

RGB = tuple[float, float, float]

PALETTE: dict[str, RGB] = {
    "red": (0.80, 0.08, 0.08),
    "green": (0.10, 0.65, 0.15),
    "blue": (0.08, 0.20, 0.85),
    "yellow": (0.95, 0.80, 0.05),
    "black": (0.05, 0.05, 0.05),
    "white": (0.92, 0.92, 0.92),
    "orange": (0.95, 0.45, 0.05),
    "purple": (0.50, 0.15, 0.70),
    "pink": (0.95, 0.45, 0.65),
    "brown": (0.45, 0.28, 0.12),
    "grey": (0.50, 0.50, 0.50),
    "cyan": (0.05, 0.75, 0.80),
    "silver": (0.72, 0.72, 0.75),
    "beige": (0.85, 0.72, 0.50),
}

# Colours the block scenes draw from: clearly distinct hues that the colour detector can separate.
BLOCK_COLORS: tuple[str, ...] = ("red", "green", "blue", "yellow", "black", "orange", "purple")


def rgb_of(color: str) -> RGB:
    """The palette RGB of a colour word; ValueError lists the known words."""
    try:
        return PALETTE[color]
    except KeyError:
        raise ValueError(f"unknown colour {color!r}; known colours: {', '.join(sorted(PALETTE))}") from None
