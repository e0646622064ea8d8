"""mallvi.bench.agents."""
