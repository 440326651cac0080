"""The CI gate over a ``comparisons.json`` document (``--fail-on-regression``).

Which comparisons gate: the baseline comparisons when there are any (a pull request against
its committed baseline), otherwise every reference comparison. A gated comparison fails on

1. any regressed case — the default rule (verdict got worse), or with ``significant_only``
   only cases whose Fisher p, Holm-adjusted over the compared cases, is < alpha with a
   lower pass rate (so the gate fails at most alpha of the time under no change);
2. any case of the new runs with no usable attempt (errored);
3. a significant overall drop (stratified permutation p < alpha, negative mean change).

Modified, new and removed cases never fail the gate; they are listed in the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_SHOW = 20  # names listed per reason before "... and N more"


def _names(items: list[str]) -> str:
    head = ", ".join(items[:_SHOW])
    return head + (f" ... and {len(items) - _SHOW} more" if len(items) > _SHOW else "")


def gate(
    comparisons: Mapping[str, Any],
    fail_on_regression: bool = True,
    significant_only: bool = False,
) -> tuple[bool, list[str]]:
    """``(failed, reasons)``. Reasons are listed even when ``fail_on_regression`` is off
    (then ``failed`` is False), so reports can show what the gate would have said."""
    comps = list(comparisons.get("comparisons", []))
    gated = [c for c in comps if c.get("kind") == "baseline"] or comps
    reasons: list[str] = []
    for comp in gated:
        label = f"{comp['candidate'].get('label', comp['candidate']['condition_id'])} vs " + (
            f"{comp['reference'].get('label', comp['reference']['condition_id'])}"
        )
        regressed = comp["regressed_significant"] if significant_only else comp["regressed"]
        if regressed:
            rule = "Holm-adjusted Fisher p < alpha" if significant_only else "verdict got worse"
            reasons.append(
                f"{label}: {len(regressed)} regressed case(s) ({rule}): {_names(regressed)}"
            )
        if comp["errored_candidate"]:
            errs = comp["errored_candidate"]
            reasons.append(f"{label}: {len(errs)} errored case(s) in the new runs: {_names(errs)}")
        if comp["significant_drop"]:
            o = comp["overall"]
            reasons.append(
                f"{label}: significant overall drop in pass rate "
                f"({o['statistic']:+.3f}, p = {o['p']:.4g}, {o['method']} permutation test)"
            )
    return (fail_on_regression and bool(reasons)), reasons
