"""Static validation of judges and templates before anything runs (part of ``--dry-run``).

``validate_judges`` raises ConfigError (exit 2) on anything that would break at run time —
a check body that does not compile, an unimportable module, a missing prompt file or judge
model, bad built-in options, composite / threshold entries naming unknown judges, a gate
on a numeric judge — and returns warnings, including the dataset lint
(:func:`eval_harness.judges.lint.lint_dataset`, prefixed ``dataset:``).
"""

from __future__ import annotations

import re
from typing import Any

from eval_harness.config.template_syntax import BUILTIN_PLACEHOLDERS, brace_fields, mustache_fields
from eval_harness.errors import ConfigError
from eval_harness.judges.code import compile_check

OUTPUT_FIELDS = {"modified_files", "exit_code", "stdout", "stderr", "output", "files", "latency_s", "cost_usd",
                 "tokens", "tool_calls", "trace"}


def _input_fields(exp: Any) -> set[str] | None:
    """Fields present in every case input (plus factor overrides)."""
    common: set[str] | None = None
    for case in exp.cases:
        keys = set(case.input)
        common = keys if common is None else common & keys
    overrides = {k for c in exp.conditions for k in c.input_overrides}
    return (common or set()) | overrides


def _expected_fields(exp: Any) -> set[str]:
    """Fields present in every case's ``expected`` (none when one is not a mapping)."""
    common: set[str] | None = None
    for case in exp.cases:
        keys = set(case.expected) if isinstance(case.expected, dict) else set()
        common = keys if common is None else common & keys
    return common or set()


def _strings(value: Any) -> list[str]:
    """Every string inside a built-in's options (they may hold templates)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _check_template(text: str, fields: set[str], where: str,
                    expected: set[str] | None = None,
                    judge_arguments: dict[str, Any] | None = None) -> None:
    for ref in mustache_fields(text):
        root, _, rest = ref.partition(".")
        if root == "expected" and expected is not None:
            name = rest.split(".")[0]
            if name and name not in expected:
                raise ConfigError(f"template references `{ref}` but not every case's expected "
                                  f"has `{name}`", path=where,
                                  hint="expected fields: " + (", ".join(sorted(expected)) or
                                                              "none (expected is not a mapping)"))
            continue
        if root == "arguments" and judge_arguments is not None:
            name = rest.split(".")[0]
            if name and name not in judge_arguments:
                raise ConfigError(f"template references `{ref}` but the judge's arguments "
                                  f"have no `{name}`", path=where,
                                  hint="arguments: " + ", ".join(sorted(judge_arguments)))
        elif root == "input" or root == "arguments":
            name = rest.split(".")[0]
            if name and name not in fields:
                raise ConfigError(f"template references `{ref}` but not every case input has "
                                  f"`{name}`", path=where, hint="fields: " + ", ".join(sorted(fields)))
        elif root == "outputs":
            name = rest.split(".")[0]
            # annotation_<key>_content: a case file named by an annotation (agent-eval-harness)
            if name and name not in OUTPUT_FIELDS and not re.fullmatch(r"annotation_\w+_content", name):
                raise ConfigError(f"template references unknown `{ref}`", path=where,
                                  hint="outputs fields: " + ", ".join(sorted(OUTPUT_FIELDS)))
        elif root not in ("expected", "annotations", "case_id", "conversation", "tool_trace"):
            raise ConfigError(f"template references unknown `{ref}`", path=where,
                              hint="use input.<field>, outputs.<field> or expected")


def validate_judges(exp: Any) -> list[str]:
    """Raise ConfigError on a broken judge or template; return warnings."""
    cfg = exp.loaded.config
    fields = _input_fields(exp) or set()
    expected = _expected_fields(exp)
    warnings: list[str] = []
    if cfg.execution.prompt:
        _check_template(cfg.execution.prompt, fields, "execution.prompt", expected)
    for i, step in enumerate(cfg.execution.steps):
        if step.prompt:
            _check_template(step.prompt, fields, f"execution.steps[{i}].prompt", expected)
    if cfg.runner is not None and cfg.runner.type == "cli" and cfg.runner.command:
        command = cfg.runner.command
        text = command if isinstance(command, str) else " ".join(command)
        for name in brace_fields(text):
            if name not in BUILTIN_PLACEHOLDERS and name not in fields:
                raise ConfigError(f"command placeholder `{{{name}}}` is neither a built-in nor "
                                  "a field of every case input", path="runner.command",
                                  hint="built-ins: " + ", ".join(sorted(BUILTIN_PLACEHOLDERS)))
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
            _check_template(prompt, fields, where + ".prompt", expected, judge.arguments)
            if judge.score_range is None:
                warnings.append(f"judge `{judge.name}` has no score_range: its verdict is read "
                                "as a boolean")
            if not (judge.model or cfg.models.judge):
                raise ConfigError("an LLM judge needs a model", path=where + ".model",
                                  hint="set models.judge or the judge's model: openai:gpt-4.1-nano")
        if judge.kind_field in BOOLEAN_BUILTINS and judge.kind_field != "json_schema":
            for text in _strings(getattr(judge, judge.kind_field)):
                _check_template(text, fields, f"{where}.{judge.kind_field}", expected)
        warnings.extend(_check_kind(judge, where))
        if "timeout" in judge.model_fields_set and judge.kind_field not in ("check", "module"):
            warnings.append(f"judge `{judge.name}`: `timeout` applies to code judges (check, "
                            "module) only; it is ignored here")
    _check_cross_refs(cfg)
    if cfg.reward is not None:
        from eval_harness.judges.reward import formula_names

        names = {j.name for j in cfg.judges}
        unknown = sorted(set(cfg.reward.weights) - names)
        if unknown:
            warnings.append(f"reward.weights names no judge: {', '.join(unknown)} (it "
                            "contributes nothing, as in agent-eval-harness)")
        formula = (cfg.reward.formula or "weighted").strip()
        ghosts = sorted(formula_names(formula) - names) if formula != "weighted" else []
        if ghosts:
            warnings.append(f"reward.formula names no judge: {', '.join(ghosts)}: every "
                            "sample's reward is errored (agent-eval-harness scores it 0)")
    _build_all(exp)
    warnings.extend(_pairwise_warnings(exp))
    from eval_harness.judges.lint import lint_dataset

    warnings.extend("dataset: " + finding for finding in lint_dataset(exp.cases))
    return warnings


BOOLEAN_BUILTINS = ("exact_match", "contains", "regex", "tool_calls", "tool_called", "max_steps",
                    "latency", "cost", "json_schema")


def _check_kind(judge: Any, where: str) -> list[str]:
    from eval_harness.judges.builtins import BUILTIN_KINDS, check_spec

    kind = judge.kind_field
    warnings: list[str] = []
    if kind in BUILTIN_KINDS:
        problem = check_spec(kind, getattr(judge, kind))
        if problem:
            raise ConfigError(problem, path=f"{where}.{kind}")
        if judge.samples > 1:
            warnings.append(f"judge `{judge.name}` is deterministic: samples > 1 only repeats it")
    if kind in BOOLEAN_BUILTINS and judge.score_range is not None:
        warnings.append(f"judge `{judge.name}` is boolean: its score_range is ignored")
    numeric = kind in ("entity_coverage", "retrieval") or (kind not in BOOLEAN_BUILTINS
                                            and judge.score_range is not None)
    if judge.gate and (numeric or kind == "pairwise"):
        raise ConfigError("gate: true needs a boolean judge", path=f"{where}.gate",
                          hint="a gate is a pass/fail judge; drop score_range or the gate")
    return warnings


def _check_cross_refs(cfg: Any) -> None:
    scored = {j.name for j in cfg.judges if j.pairwise is None}
    pairwise = {j.name for j in cfg.judges if j.pairwise is not None}
    comp = cfg.composite
    if comp is not None:
        for key, names in (("judges", comp.judges or []), ("weights", list(comp.weights)),
                           ("gates", comp.gates)):
            for name in names:
                if name not in scored:
                    raise ConfigError(f"unknown judge `{name}`", path=f"composite.{key}",
                                      hint="scored judges: " + ", ".join(sorted(scored)))
    if cfg.thresholds is not None:
        for name in cfg.thresholds.judges:
            if name in pairwise:
                raise ConfigError(f"`{name}` is pairwise: it has no per-sample value to "
                                  "threshold", path=f"thresholds.judges.{name}")
            if name not in scored:
                raise ConfigError(f"unknown judge `{name}`", path=f"thresholds.judges.{name}",
                                  hint="scored judges: " + ", ".join(sorted(scored)))


def _build_all(exp: Any) -> None:
    """Instantiate every condition's judges (imports modules, reads prompt files)."""
    from eval_harness.judges.cache import VerdictCache
    from eval_harness.judges.scorer import JudgeScorer

    scorer = JudgeScorer(exp, VerdictCache())
    for cond in exp.conditions:
        scorer.bind(cond.condition_id)


def _pairwise_warnings(exp: Any) -> list[str]:
    out = []
    for i, judge in enumerate(exp.loaded.config.judges):
        if judge.pairwise is None:
            continue
        if len(exp.conditions) < 2:
            out.append(f"pairwise judge `{judge.name}` needs two or more conditions")
        spec = judge.pairwise if isinstance(judge.pairwise, dict) else {}
        unknown = set(spec) - {"criteria", "prompt", "reference"}
        if unknown:
            raise ConfigError(f"unknown pairwise option(s): {', '.join(sorted(unknown))}",
                              path=f"judges[{i}]({judge.name}).pairwise",
                              hint="pairwise: {criteria, prompt, reference}")
        if spec.get("reference") is not None:
            from eval_harness.matrix.experiment import select_conditions

            select_conditions(exp.conditions, [str(spec["reference"])])
        if not (judge.model or exp.loaded.config.models.judge):
            raise ConfigError("an LLM judge needs a model", path=f"judges[{i}]({judge.name}).model",
                              hint="set models.judge or the judge's model")
    return out
