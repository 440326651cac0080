"""Continuous-integration glue (the GitHub Action's steps, runnable locally)."""
