"""Runner types -> runners: the builtin runners register themselves (``@register`` in
runner/contract.py) when this module imports them; :func:`build_runner` picks one by
``runner.type``."""

from __future__ import annotations

from eval_harness.config.models import EvalConfig
from eval_harness.errors import ConfigError

# importing the builtin runners runs their @register decorators
from eval_harness.runner import claude_code, cli, http, llm, pyfunc  # noqa: F401
from eval_harness.runner.contract import REGISTRY, Runner


def build_runner(config: EvalConfig) -> Runner:
    """The runner for ``config.runner.type`` (cli when no runner block)."""
    name = config.runner.type if config.runner else "cli"
    factory = REGISTRY.get(name)
    if factory is None:
        raise ConfigError(f"unknown runner type {name!r}", path="runner.type",
                          hint="one of " + ", ".join(sorted(REGISTRY)))
    return factory(config)
