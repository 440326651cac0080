"""Dry-run warnings about the design: factors nothing consumes, judges judging themselves."""

from __future__ import annotations

import json
from typing import Any

from eval_harness.config.models import EvalConfig
from eval_harness.config.template_syntax import brace_fields, mustache_fields
from eval_harness.matrix.builder import Matrix


def _command_text(cfg: EvalConfig) -> str:
    runner = cfg.runner
    if runner is None or runner.command is None:
        return ""
    return runner.command if isinstance(runner.command, str) else " ".join(runner.command)


def _template_text(cfg: EvalConfig) -> str:
    parts: list[str] = []
    if cfg.execution.prompt:
        parts.append(cfg.execution.prompt)
    if cfg.execution.arguments is not None:
        parts.append(json.dumps(cfg.execution.arguments, default=str))
    if cfg.runner and cfg.runner.system:
        parts.append(cfg.runner.system)
    return "\n".join(parts)


def unconsumed_factors(cfg: EvalConfig, matrix: Matrix) -> list[str]:
    """Factors whose level reaches nothing (they still define conditions)."""
    runner_type = cfg.runner.type if cfg.runner else None
    command = _command_text(cfg)
    placeholders = set(brace_fields(command))
    inputs = {f.split(".", 1)[1].split(".")[0] for f in mustache_fields(_template_text(cfg))
              if f.startswith("input.")}
    unused = []
    for name, levels in matrix.factors.items():
        if any(hasattr(level, "set") for level in levels):
            continue  # variants change the config itself
        if runner_type in ("http", "python"):
            continue  # the whole input (overrides included) is sent
        if name == "model":
            used = runner_type in ("openai", "anthropic", "claude-code") or "model" in placeholders
        elif name == "effort":
            used = runner_type in ("claude-code", "openai", "anthropic") or "effort" in placeholders
        elif name in ("subagent", "subagent_model"):
            used = runner_type == "claude-code" or "subagent_model" in placeholders
        else:
            used = name in placeholders or name in inputs
        if not used:
            unused.append(name)
    return unused


def _bare(model: Any) -> str:
    """``openai:gpt-4.1`` -> ``gpt-4.1``; other colons (``llama3:8b``) are part of the name."""
    text = str(model)
    for provider in ("openai:", "anthropic:"):
        if text.startswith(provider):
            return text[len(provider):]
    return text


def judge_models(cfg: EvalConfig) -> set[str]:
    """Bare names of every LLM judge model."""
    found = set()
    for judge in cfg.judges:
        if judge.is_llm and getattr(judge, judge.kind_field) is not False:
            model = judge.model or cfg.models.judge
            if model:
                found.add(_bare(model))
    return found


def self_judging(cfg: EvalConfig, matrix: Matrix) -> list[str]:
    """Judge models that are also models under test."""
    under_test = {_bare(m) for m in matrix.factors.get("model", [])}
    if cfg.models.skill:
        under_test.add(_bare(cfg.models.skill))
    return sorted(judge_models(cfg) & under_test)
