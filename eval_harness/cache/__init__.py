"""The model-call cache: replies of API runners and LLM judges kept in SQLite (docs/cost.md)."""
