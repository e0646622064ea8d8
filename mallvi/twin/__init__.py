"""The rig's simulated twin: the rig's own drivers, camera and skills in closed loop on a SAPIEN scene."""
