"""mallvi.logviz.components."""
