"""runner stage."""
