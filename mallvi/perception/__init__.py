"""Perception: detectors, fusion, segmentation, grasp points, projection and the scene graph."""
