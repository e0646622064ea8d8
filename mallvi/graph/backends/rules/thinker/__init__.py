"""The rules Thinker: skill calls for a subtask from the scene's geometry, and its alternative strategies."""
