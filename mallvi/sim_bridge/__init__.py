"""The SAPIEN dual-arm tabletop: world, embodiment, objects, planners and skills."""
