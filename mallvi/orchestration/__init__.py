"""One run of the agent graph on a Station (simulator, twin or rig): set-up, run, judgement, result."""
