"""mallvi.bench.tasks."""
