"""mallvi.graph.backends."""
