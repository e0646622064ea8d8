"""The AgileX Piper arm: configuration, CAN driver, kinematics, IK, reach and a wire-level emulator."""
