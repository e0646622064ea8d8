"""mallvi.graph.backends.rules."""
