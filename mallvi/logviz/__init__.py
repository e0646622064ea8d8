"""Reading run traces and the Dash trace viewer (traces are written by mallvi.tracing)."""
