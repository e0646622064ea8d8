"""mallvi: a LangGraph multi-agent controller for dual-arm manipulation (MALLVi), in SAPIEN or on a real rig."""

__version__ = "0.1.0"
