"""Static validation of judges and templates before anything runs (part of ``--dry-run``)."""

from __future__ import annotations

import textwrap
from typing import Any

from eval_harness.config.templates import brace_fields, mustache_fields
from eval_harness.errors import ConfigError

OUTPUT_FIELDS = {"exit_code", "stdout", "stderr", "output", "files", "latency_s", "cost_usd",
                 "tokens", "tool_calls", "trace"}
CLI_PLACEHOLDERS = {"model", "effort", "subagent_model", "workspace", "output_dir", "timeout",
                    "config_dir", "input_json", "input_file", "case_id", "replication",
                    "condition_id"}


def compile_check(body: str, where: str) -> Any:
    """Compile a ``check`` body as the body of ``def check(outputs, input, expected)``."""
    source = "def __check__(outputs, input, expected, arguments):\n" + textwrap.indent(body, "    ")
    try:
        return compile(source, f"<judge {where}>", "exec")
    except SyntaxError as exc:
        line = (exc.lineno or 2) - 1
        raise ConfigError(f"check code does not compile: {exc.msg} (line {line} of the body)",
                          path=where, hint="the body runs inside a function; `return value, why`"
                          ) from None


def _input_fields(exp: Any) -> set[str] | None:
    """Fields present in every case input (plus factor overrides)."""
    common: set[str] | None = None
    for case in exp.cases:
        keys = set(case.input)
        common = keys if common is None else common & keys
    overrides = {k for c in exp.conditions for k in c.input_overrides}
    return (common or set()) | overrides


def _check_template(text: str, fields: set[str], where: str) -> None:
    for ref in mustache_fields(text):
        root, _, rest = ref.partition(".")
        if root == "input" or root == "arguments":
            name = rest.split(".")[0]
            if name and name not in fields:
                raise ConfigError(f"template references `{ref}` but not every case input has "
                                  f"`{name}`", path=where, hint="fields: " + ", ".join(sorted(fields)))
        elif root == "outputs":
            name = rest.split(".")[0]
            if name and name not in OUTPUT_FIELDS:
                raise ConfigError(f"template references unknown `{ref}`", path=where,
                                  hint="outputs fields: " + ", ".join(sorted(OUTPUT_FIELDS)))
        elif root not in ("expected", "annotations", "case_id"):
            raise ConfigError(f"template references unknown `{ref}`", path=where,
                              hint="use input.<field>, outputs.<field> or expected")


def validate_judges(exp: Any) -> list[str]:
    """Raise ConfigError on a broken judge or template; return warnings."""
    cfg = exp.loaded.config
    fields = _input_fields(exp) or set()
    warnings: list[str] = []
    if cfg.execution.prompt:
        _check_template(cfg.execution.prompt, fields, "execution.prompt")
    if cfg.runner is not None and cfg.runner.type == "cli" and cfg.runner.command:
        command = cfg.runner.command
        text = command if isinstance(command, str) else " ".join(command)
        for name in brace_fields(text):
            if name not in CLI_PLACEHOLDERS and name not in fields:
                raise ConfigError(f"command placeholder `{{{name}}}` is neither a built-in nor "
                                  "a field of every case input", path="runner.command",
                                  hint="built-ins: " + ", ".join(sorted(CLI_PLACEHOLDERS)))
    for i, judge in enumerate(cfg.judges):
        where = f"judges[{i}]({judge.name})"
        if judge.check is not None:
            compile_check(judge.check, where + ".check")
        prompt = judge.prompt
        if judge.prompt_file is not None:
            path = exp.loaded.base_dir / judge.prompt_file
            if not path.exists():
                raise ConfigError("prompt_file not found", path=where + ".prompt_file",
                                  hint="paths are relative to the config file")
            prompt = path.read_text(encoding="utf-8")
        if prompt is not None:
            _check_template(prompt, fields, where + ".prompt")
            if judge.score_range is None:
                warnings.append(f"judge `{judge.name}` has no score_range: its verdict is read "
                                "as a boolean")
            if not (judge.model or cfg.models.judge):
                raise ConfigError("an LLM judge needs a model", path=where + ".model",
                                  hint="set models.judge or the judge's model: openai:gpt-4.1-nano")
    return warnings
