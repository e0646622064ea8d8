"""The bottom layer: the contracts every other package of mallvi builds on (no imports from mallvi above)."""
