"""Traces: what an agent did, as typed, nested steps (see docs/traces.md)."""
