"""The one version source (pyproject's dynamic version reads it; ``eval_harness.__version__``
re-exports it). Modules inside the package import it from here, never from the package root
(the root re-exports the public API, a door)."""

__version__ = "0.1.0"
