"""mallvi.perception.detectors."""
