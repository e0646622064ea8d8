"""Arm descriptions for the simulator and the rig's planner: the default Piper-kinematics arm (URDF + SRDF)."""
