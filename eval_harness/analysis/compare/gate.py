"""The CI gate over a ``comparisons.json`` document (``--fail-on-regression``).

Which comparisons gate: the baseline comparisons when there are any (a pull request against
its committed baseline), otherwise every reference comparison. The gate's rule
(``--gate``), all at family-wise level alpha over the *whole gate* (every gated condition,
every case) unless named strict:

- ``overall`` (default): per gated comparison the one-sided case-stratified paired
  permutation p of a drop in pass rate (``overall.p_drop``, see permutation.py); the gate
  fails when a Holm-adjusted p_drop (Holm 1979, over the gated comparisons) is < alpha.
  Under no change each p_drop is valid (exact conditional on the margins), so the chance
  that an unchanged agent fails the gate is ≤ alpha whatever the number of conditions.
  Per-case movements are listed as information only: with flaky cases some always move.
- ``cases`` (``--significant-only``): one Holm family holding every gated comparison's
  p_drop *and* every compared case's two-sided Fisher exact p; fails on an adjusted
  p < alpha with a lower candidate pass rate (case or overall). Family-wise ≤ alpha too,
  and it names the cases that got worse; less powerful than ``overall`` for broad drops.
- ``strict``: any case whose verdict got worse (passed → flaky/failed, flaky → failed)
  fails the gate, as does an ``overall`` rejection. For deterministic apps (temperature 0,
  one attempt): any flip is a real change. With flaky cases it fails unchanged agents
  (measured: bench/bench_gate.py), so it is never the default.

Every rule also fails on any case of the new runs with no usable attempt (errored): that
is a broken run, not noise. Modified, new and removed cases never fail the gate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from eval_harness._util.numbers import run_number
from eval_harness.analysis.stats.correction import adjust_pvalues
from eval_harness.errors import UsageError

_SHOW = 20  # names listed per reason before "... and N more"
GATE_RULES = ("overall", "cases", "strict")
DEFAULT_RULE = "overall"
DESCRIPTIONS = {
    "overall": "fails when the one-sided case-stratified paired permutation test of a drop "
               "in pass rate, Holm-adjusted across the gated conditions, is < alpha (whole-"
               "gate false-alarm rate <= alpha); per-case changes are information only",
    "cases": "fails when any compared case (two-sided Fisher exact p, lower pass rate) or "
             "any condition's overall drop test is < alpha after one Holm adjustment over "
             "all of them (whole-gate false-alarm rate <= alpha)",
    "strict": "fails on any case whose verdict got worse (passed -> flaky/failed, flaky -> "
              "failed) or on the overall rule; for deterministic apps (no false-alarm "
              "control when cases are flaky)",
}


def _names(items: list[str]) -> str:
    head = ", ".join(items[:_SHOW])
    return head + (f" ... and {len(items) - _SHOW} more" if len(items) > _SHOW else "")


def _label(comp: Mapping[str, Any]) -> str:
    cand, ref = comp["candidate"], comp["reference"]
    return (f"{cand.get('label', cand['condition_id'])} vs "
            f"{ref.get('label', ref['condition_id'])}")


def gated_comparisons(comparisons: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The baseline comparisons when there are any, else every reference comparison."""
    comps = list(comparisons.get("comparisons", []))
    return [c for c in comps if c.get("kind") == "baseline"] or comps


def _p(x: Any) -> float:
    f = run_number(x)
    return math.nan if f is None else f


@dataclass(frozen=True)
class _Test:
    comp: int  # index into the gated comparisons
    case_id: str | None  # None: the condition's overall drop test
    p: float
    drop: bool  # direction: the candidate is worse


def _tests(gated: list[Mapping[str, Any]], with_cases: bool) -> list[_Test]:
    tests = []
    for i, comp in enumerate(gated):
        o = comp.get("overall") or {}
        tests.append(_Test(i, None, _p(o.get("p_drop")), (o.get("score") or 0.0) < 0))
        if with_cases:
            tests.extend(_case_tests(i, comp.get("cases") or []))
    return tests


def _case_tests(i: int, rows: Iterable[Mapping[str, Any]]) -> list[_Test]:
    return [_Test(i, str(r["case_id"]), _p(r.get("fisher_p")),
                  (r.get("pass_rate_diff") or 0.0) < 0)
            for r in rows if r.get("status") == "compared"]


def gate_rule_of(rule: str | None, significant_only: bool = False) -> str:
    """The gate rule chosen: ``rule`` (``--gate``), where ``significant_only``
    (``--significant-only``) is the older spelling of ``cases``; default ``overall``."""
    if significant_only:
        if rule not in (None, "cases"):
            raise UsageError(f"--significant-only means --gate cases, not --gate {rule}",
                             hint="pass only --gate")
        return "cases"
    return rule or DEFAULT_RULE


def gate(
    comparisons: Mapping[str, Any],
    fail_on_regression: bool = True,
    significant_only: bool = False,
    *,
    rule: str | None = None,
    alpha: float | None = None,
) -> tuple[bool, list[str]]:
    """``(failed, reasons)`` under ``rule`` (module docstring; ``significant_only`` is the
    older spelling of ``rule="cases"``). Reasons are listed even when
    ``fail_on_regression`` is off (then ``failed`` is False), so reports can show what the
    gate would have said."""
    rule = gate_rule_of(rule, significant_only)
    if rule not in GATE_RULES:
        raise UsageError(f"unknown gate rule {rule!r}", hint=f"use one of {', '.join(GATE_RULES)}")
    level = float(alpha if alpha is not None else comparisons.get("alpha", 0.05))
    gated = gated_comparisons(comparisons)
    tests = _tests(gated, rule == "cases")
    adjusted = [float(a) for a in adjust_pvalues([t.p for t in tests], "holm")] if tests else []
    reasons: list[str] = []
    family = f"Holm over {sum(math.isfinite(t.p) for t in tests)} test(s)"
    for i, comp in enumerate(gated):
        label = _label(comp)
        mine = [(t, a) for t, a in zip(tests, adjusted, strict=True) if t.comp == i]
        worse = [t.case_id for t, a in mine if t.case_id and t.drop and a < level]
        if worse:
            reasons.append(f"{label}: {len(worse)} case(s) significantly worse (Fisher exact "
                           f"p, {family}, < {level:g}): {_names([str(w) for w in worse])}")
        if rule == "strict" and comp["regressed"]:
            reasons.append(f"{label}: {len(comp['regressed'])} case(s) whose verdict got "
                           f"worse (strict gate): {_names(list(comp['regressed']))}")
        if comp["errored_candidate"]:
            errs = list(comp["errored_candidate"])
            reasons.append(f"{label}: {len(errs)} errored case(s) in the new runs: {_names(errs)}")
        for t, a in mine:
            if t.case_id is None and t.drop and a < level:
                o = comp["overall"]
                reasons.append(
                    f"{label}: significant overall drop in pass rate ({o['statistic']:+.3f}, "
                    f"one-sided p = {o['p_drop']:.4g}, {family}: {a:.4g} < {level:g}; "
                    f"{o['method']} case-stratified permutation test)")
    return (fail_on_regression and bool(reasons)), reasons
