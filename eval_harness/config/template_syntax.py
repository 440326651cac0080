"""Two tiny template syntaxes, shared by runners and judges.

- ``{{ input.field }}`` / ``{{ outputs.output }}`` / ``{{ expected }}``: dotted look-ups in a
  context mapping (prompts, arguments, judge prompts). Values that are not strings are
  rendered as JSON.
- ``{name}``: argv placeholders in a cli command (``{model}``, ``{workspace}``, input fields).
  ``{{`` and ``}}`` are literal braces there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from eval_harness.errors import ConfigError

_MUSTACHE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*)\s*\}\}")
_BRACE = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")
#: the ``{name}`` placeholders a cli command may use besides the case input's fields (the
#: cli runner fills them; judge validation accepts them)
BUILTIN_PLACEHOLDERS = ("model", "effort", "subagent_model", "workspace", "output_dir",
                        "timeout", "config_dir", "input_json", "input_file", "case_id",
                        "replication", "condition_id", "agent", "args")


class MissingField(KeyError):
    """A dotted name that the context does not hold."""


def lookup(context: Mapping[str, Any], dotted: str) -> Any:
    """``a.b.0.c`` in nested mappings / lists; :class:`MissingField` when absent."""
    current: Any = context
    for part in dotted.split("."):
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            raise MissingField(dotted)
    return current


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def mustache_fields(template: str) -> list[str]:
    """Dotted names referenced by ``{{ ... }}`` in ``template``."""
    return _MUSTACHE.findall(template)


def render_mustache(template: str, context: Mapping[str, Any], *, where: str = "") -> str:
    """Render ``{{ dotted.name }}``; an unknown name is a ConfigError."""

    def sub(match: re.Match[str]) -> str:
        try:
            return _text(lookup(context, match.group(1)))
        except MissingField:
            raise ConfigError(f"template references unknown field `{match.group(1)}`",
                              path=where, hint="check the case input fields") from None

    return _MUSTACHE.sub(sub, template)


def render_value(value: Any, context: Mapping[str, Any], *, where: str = "") -> Any:
    """Render every string inside a nested value; a string that is exactly one
    ``{{ x }}`` keeps the referenced value's type."""
    if isinstance(value, str):
        whole = _MUSTACHE.fullmatch(value.strip())
        if whole:
            try:
                return lookup(context, whole.group(1))
            except MissingField:
                pass
        return render_mustache(value, context, where=where)
    if isinstance(value, Mapping):
        return {k: render_value(v, context, where=where) for k, v in value.items()}
    if isinstance(value, list):
        return [render_value(v, context, where=where) for v in value]
    return value


def brace_fields(template: str) -> list[str]:
    """Names referenced by ``{name}`` placeholders."""
    return _BRACE.findall(template)


def render_braces(template: str, values: Mapping[str, Any], *, where: str = "") -> str:
    """Render ``{name}`` placeholders (``{{``/``}}`` are literal braces)."""

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise ConfigError(f"command references unknown placeholder `{{{name}}}`",
                              path=where, hint="use {model}, {effort}, {workspace}, "
                              "{output_dir}, {timeout}, {config_dir} or an input field")
        value = values[name]
        return "" if value is None else _text(value)

    out = _BRACE.sub(sub, template)
    return out.replace("{{", "{").replace("}}", "}")


_ARG_BRACE = re.compile(r"\{([^{}]+)\}")


def render_arguments(template: Any, case_input: Mapping[str, Any], *, where: str = "execution.arguments") -> str:
    """An agent-eval-harness ``arguments`` string: ``{{ input.x }}`` when it uses ``{{``,
    else ``{field}`` (required) / ``{field?}`` (omitted when absent); runs of blanks are
    squeezed as it does. A mapping renders as JSON; None as ""."""
    if template is None:
        return ""
    if not isinstance(template, str):
        return _text(render_value(template, {"input": case_input}, where=where))
    if "{{" in template:
        text = render_mustache(template, {"input": case_input}, where=where)
    else:
        def sub(match: re.Match[str]) -> str:
            name = match.group(1)
            optional = name.endswith("?")
            name = name.rstrip("?")
            value = case_input.get(name)
            if value is None:
                if optional:
                    return ""
                raise ConfigError(f"arguments reference input field `{name}`, which the case "
                                  "does not have", path=where,
                                  hint="write {" + name + "?} to make it optional")
            return _text(value)
        text = _ARG_BRACE.sub(sub, template)
    return re.sub(r"[ \t]+", " ", text).strip()
