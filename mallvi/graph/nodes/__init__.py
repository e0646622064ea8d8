"""mallvi.graph.nodes."""
