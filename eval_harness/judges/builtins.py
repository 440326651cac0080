"""Deterministic built-in judges (no network).

Each is configured by the value of its key in the judge block; every one returns a boolean
except ``entity_coverage`` (a fraction in [0, 1]):

- ``exact_match: true | {case_sensitive, strip, collapse_whitespace, strip_punctuation,
  ignore_diacritics}`` — the answer equals the reference answer (``expected.answer`` or a
  string ``expected``) after normalisation (default: strip, collapse whitespace, case-fold).
- ``contains: "text" | [..] | {all: [..], any: [..], case_sensitive}`` — literal substrings;
  strings may use ``{{ expected.x }}`` / ``{{ input.x }}``.
- ``regex: "pattern" | {pattern, flags: "ims", must_match: true}`` — ``re.search``.
- ``entity_coverage: true | {case_sensitive, ignore_diacritics}`` — fraction of
  ``expected.entities`` found in the answer (an item with none scores 1, vacuously).
- ``tool_calls: 5 | {max: 5} | {budget: {simple: 3, medium: 7}, tag: tier}`` — the reported
  count within budget; an unknown count (no trace) is an error, not a pass.
- ``tool_called`` / ``max_steps`` — over the trace (:mod:`eval_harness.judges.trace_scorers`).
- ``retrieval: {k, expected_docs, metric}`` — recall@k (default) / precision@k / MRR of the
  trace's retrieved documents (:mod:`eval_harness.judges.retrieval`).
- ``latency: 30 | {max: 30}`` seconds; ``cost: 0.05 | {max: 0.05}`` USD — unknown is an error.
- ``json_schema: {..schema..}`` — the answer parses as JSON and validates.
"""

from __future__ import annotations

import json
import re
import string
from typing import Any

from eval_harness.config.template_syntax import render_value
from eval_harness.judges.expected import expected_entities, fold, reference_answer
from eval_harness.judges.retrieval import check_retrieval_spec, retrieval
from eval_harness.judges.trace_scorers import check_trace_spec, max_steps, tool_called
from eval_harness.judges.values import JudgeFailure, Outcome

BUILTIN_KINDS = ("exact_match", "contains", "regex", "entity_coverage", "tool_calls",
                 "tool_called", "max_steps", "retrieval", "latency", "cost", "json_schema")


def _opts(spec: Any) -> dict[str, Any]:
    return spec if isinstance(spec, dict) else {}


def _answer(ctx: dict[str, Any]) -> str:
    out = ctx["outputs"].get("output")
    return "" if out is None else str(out)


def _render(value: Any, ctx: dict[str, Any]) -> Any:
    return render_value(value, ctx, where="judge")


def _norm_text(text: str, o: dict[str, Any]) -> str:
    if o.get("strip", True):
        text = text.strip()
    if o.get("strip_punctuation", False):
        text = text.translate(str.maketrans("", "", string.punctuation))
    if o.get("collapse_whitespace", True):
        text = " ".join(text.split())
    return fold(text, case=not o.get("case_sensitive", False),
                diacritics=bool(o.get("ignore_diacritics", False)))


def exact_match(spec: Any, ctx: dict[str, Any]) -> Outcome:
    """Answer == reference after normalisation."""
    o = _opts(spec)
    ref = _render(o["reference"], ctx) if "reference" in o else reference_answer(ctx["expected"])
    if ref is None:
        raise JudgeFailure("exact_match needs a string `expected` or `expected.answer`")
    ok = _norm_text(_answer(ctx), o) == _norm_text(str(ref), o)
    return Outcome(ok, "matches the reference" if ok else "differs from the reference")


def contains(spec: Any, ctx: dict[str, Any]) -> Outcome:
    """Literal substrings: all of ``all`` and at least one of ``any``."""
    o = _opts(spec)
    if isinstance(spec, (str, list)):
        o = {"all": spec}
    need_all = _render(o.get("all", []), ctx)
    need_any = _render(o.get("any", []), ctx)
    need_all = [need_all] if isinstance(need_all, str) else list(need_all)
    need_any = [need_any] if isinstance(need_any, str) else list(need_any)
    cs = bool(o.get("case_sensitive", False))
    answer = fold(_answer(ctx), case=not cs, diacritics=False)
    missing = [s for s in need_all if fold(str(s), case=not cs, diacritics=False) not in answer]
    any_ok = not need_any or any(fold(str(s), case=not cs, diacritics=False) in answer
                                 for s in need_any)
    ok = not missing and any_ok
    why = "all present" if ok else (f"missing: {missing}" if missing else "none of `any` present")
    return Outcome(ok, why)


def regex(spec: Any, ctx: dict[str, Any]) -> Outcome:
    """``re.search`` (``must_match: false`` inverts)."""
    o = {"pattern": spec} if isinstance(spec, str) else _opts(spec)
    flags = 0
    for ch in str(o.get("flags", "")):
        flags |= {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}.get(ch, 0)
    found = re.search(str(o.get("pattern", "")), _answer(ctx), flags) is not None
    ok = found if o.get("must_match", True) else not found
    return Outcome(ok, "pattern found" if found else "pattern not found")


def entity_coverage(spec: Any, ctx: dict[str, Any]) -> Outcome:
    """Fraction of ``expected.entities`` present in the answer."""
    o = _opts(spec)
    entities = expected_entities(ctx["expected"])
    if entities is None:
        raise JudgeFailure("entity_coverage needs `expected.entities` (a list)")
    if not entities:
        return Outcome(1.0, "no expected entities (vacuously covered)")
    case = not o.get("case_sensitive", False)
    diac = bool(o.get("ignore_diacritics", True))
    answer = fold(_answer(ctx), case=case, diacritics=diac)
    missing = [e for e in entities if fold(e, case=case, diacritics=diac) not in answer]
    share = (len(entities) - len(missing)) / len(entities)
    return Outcome(share, f"missing: {missing}" if missing else "all entities present")


def _budget(spec: Any, ctx: dict[str, Any]) -> float:
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        return float(spec)
    o = _opts(spec)
    if "max" in o:
        return float(o["max"])
    table = o.get("budget", {k: v for k, v in o.items() if k != "tag"})
    tag = str(o.get("tag", "tier"))
    level = ctx["tags"].get(tag)
    if level is None or str(level) not in {str(k) for k in table}:
        raise JudgeFailure(f"no tool-call budget for {tag}={level!r} (budgets: {sorted(table)})")
    return float({str(k): v for k, v in table.items()}[str(level)])


def tool_calls(spec: Any, ctx: dict[str, Any]) -> Outcome:
    """Reported tool-call count <= budget."""
    count = ctx["outputs"].get("tool_calls")
    if count is None:
        raise JudgeFailure("tool-call count unknown (the run reported no trace)")
    budget = _budget(spec, ctx)
    ok = float(count) <= budget
    return Outcome(ok, f"{count} tool calls, budget {budget:g}")


def _limit(spec: Any, key: str, ctx: dict[str, Any], unit: str) -> Outcome:
    raw: Any = spec.get("max") if isinstance(spec, dict) else spec
    limit = float(raw)
    got = ctx["outputs"].get(key)
    if got is None:
        raise JudgeFailure(f"{key} unknown: a {unit} limit cannot pass an unknown value")
    return Outcome(float(got) <= limit, f"{got:g} {unit} (limit {limit:g})")


def latency(spec: Any, ctx: dict[str, Any]) -> Outcome:
    """``latency_s`` <= limit."""
    return _limit(spec, "latency_s", ctx, "s")


def cost(spec: Any, ctx: dict[str, Any]) -> Outcome:
    """``cost_usd`` <= limit (unknown cost is an error)."""
    return _limit(spec, "cost_usd", ctx, "USD")


def json_schema(spec: Any, ctx: dict[str, Any]) -> Outcome:
    """The answer parses as JSON and validates (a parse failure is a fail, not an error)."""
    import jsonschema

    schema = spec.get("schema", spec) if isinstance(spec, dict) else spec
    text = _answer(ctx).strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.DOTALL)
    try:
        doc = json.loads(fenced.group(1) if fenced else text)
    except json.JSONDecodeError as exc:
        return Outcome(False, f"not JSON: {exc.msg}")
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=str)
    if errors:
        return Outcome(False, f"schema violation: {errors[0].message}")
    return Outcome(True, "valid")


FUNCTIONS = {
    "exact_match": exact_match, "contains": contains, "regex": regex,
    "entity_coverage": entity_coverage, "tool_calls": tool_calls, "tool_called": tool_called,
    "max_steps": max_steps, "retrieval": retrieval,
    "latency": latency, "cost": cost, "json_schema": json_schema,
}


def check_spec(kind: str, spec: Any) -> str | None:
    """A static problem with a built-in's options, or None (used by validate_judges)."""
    if kind in ("latency", "cost"):
        raw = spec.get("max") if isinstance(spec, dict) else spec
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw < 0:
            return f"`{kind}` needs a number >= 0 or {{max: N}}"
    if kind == "regex":
        pattern = spec if isinstance(spec, str) else _opts(spec).get("pattern")
        if not isinstance(pattern, str):
            return "`regex` needs a pattern string"
        try:
            re.compile(pattern)
        except re.error as exc:
            return f"bad regex: {exc}"
    if kind == "json_schema":
        import jsonschema

        schema = spec.get("schema", spec) if isinstance(spec, dict) else spec
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            return f"invalid JSON Schema: {exc.message}"
    if kind in ("tool_called", "max_steps"):
        return check_trace_spec(kind, spec)
    if kind == "retrieval":
        return check_retrieval_spec(spec)
    if kind == "tool_calls" and not (isinstance(spec, (int, float, dict)) and spec is not True):
        return "`tool_calls` needs a number, {max: N} or {budget: {tier: N}, tag: tier}"
    return None


class BuiltinJudge:
    """A deterministic built-in."""

    def __init__(self, kind: str, spec: Any) -> None:
        self.kind = kind
        self.spec = spec
        self._fn = FUNCTIONS[kind]

    def evaluate(self, ctx: dict[str, Any], sample_index: int) -> Outcome:
        """Apply the built-in."""
        return self._fn(self.spec, ctx)
