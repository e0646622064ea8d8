"""Trace writing: the run trace schema and writer, and the LangGraph callback that records node and model calls."""
