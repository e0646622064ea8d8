"""Arm descriptions for the simulator: the default Piper-kinematics arm (URDF + SRDF) and its loader."""
