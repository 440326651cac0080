"""judges stage."""
