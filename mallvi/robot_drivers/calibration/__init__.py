"""Eye-to-hand calibration of the rig's camera: capture, solve, refine, files."""
