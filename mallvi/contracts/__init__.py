"""Contracts at the bottom of mallvi: what the robot set-up, perception and the agent graph agree on."""
