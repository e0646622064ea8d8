"""The SAPIEN dual-arm tabletop: world, objects, scenes, planners and skills."""
