"""The llm backend: agents answered by a model behind an OpenAI-compatible endpoint."""
