"""The robot: its Piper embodiment, the arm and camera drivers (sim and real) behind one contract, and the safety
guard in front of them."""
