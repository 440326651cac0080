"""matrix stage."""
