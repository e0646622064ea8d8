"""The Intel RealSense depth camera: configuration, driver and a synthetic device."""
