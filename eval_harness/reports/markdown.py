"""GitHub-flavoured Markdown report, fit for a CI job summary or a pull-request comment.

Headline first (design, significant terms, regressions), then the tables; the long case
grid sits in a ``<details>`` block. Every cell is escaped: ``|`` (table syntax), HTML
metacharacters (GitHub renders inline HTML) and backticks / asterisks / underscores that
would turn a level name into formatting. The whole text stays well below GitHub's 65,536-
character comment limit for up to ~50 conditions (the grid is capped).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from eval_harness._util.github_text import for_github
from eval_harness._util.safe_text import safe_text
from eval_harness.reports import fmt
from eval_harness.reports.tables import TextTable, all_tables
from eval_harness.reports.tables_compare import comparison_findings

_MD_SPECIAL = str.maketrans({"|": "\\|", "`": "\\`", "*": "\\*", "_": "\\_", "\\": "\\\\"})


def md_escape(text: Any) -> str:
    """One table-safe line: HTML-escaped, Markdown metacharacters backslashed, mentions,
    bare URLs and workflow-command prefixes made inert (:func:`for_github`)."""
    s = for_github(" ".join(str(text).split()))  # no pings, autolinks, workflow commands
    # Brackets stay literal (CI columns "[0.1, 0.2]"); "](" is broken so no link can form.
    return html.escape(s, quote=False).translate(_MD_SPECIAL).replace("](", "]\\(")


def md_table(t: TextTable) -> list[str]:
    """A GFM table (or the empty message) followed by its notes."""
    out: list[str] = []
    if not t.rows:
        out.append(f"_{md_escape(t.empty)}_")
    else:
        out.append("| " + " | ".join(md_escape(c) for c in t.columns) + " |")
        out.append("|" + "|".join("---:" if a == "r" else ":---" for a in t.align) + "|")
        for row in t.rows:
            out.append("| " + " | ".join(md_escape(c) for c in row) + " |")
    out.extend(f"\n> {md_escape(n)}" for n in t.notes)
    return out


def _headline(report: Mapping[str, Any]) -> list[str]:
    design = report.get("design") or {}
    conds = report.get("conditions") or []
    lines = [
        f"**{len(conds)} conditions × {design.get('n_cases', '?')} cases × "
        f"{design.get('replications', '?')} replications**, response "
        f"{md_escape(report.get('response'))}, correction {md_escape(report.get('correction'))}, "
        f"α = {report.get('alpha')}."
    ]
    if report.get("pass_rule"):
        lines.append(f"- Pass rule: {md_escape(report['pass_rule'])}.")
    terms = (report.get("anova") or {}).get("terms") or []
    sig = [t for t in terms if t.get("significant") is True]
    if not terms:
        lines.append("- ANOVA: not available")
    elif sig:
        lines.append("- Significant terms: " + ", ".join(
            f"**{md_escape(t['term'])}** (p adj {fmt.pval(t.get('p_adjusted'))}, "
            f"partial η² {fmt.f3(t.get('partial_eta_sq'), 2)})" for t in sig))
    else:
        lines.append("- No term is significant after correction.")
    best = max((c for c in conds if fmt.is_num(c.get("mean"))), key=lambda c: c["mean"], default=None)
    if best:
        lines.append(f"- Highest mean composite: {md_escape(best.get('short_label') or best['label'])}"
                     f" ({fmt.est_ci(best['mean'], best.get('ci'))})")
    for severity, text in comparison_findings(report):
        mark = ":warning: " if severity == "regressed" else ""
        lines.append(f"- {mark}{md_escape(text)}")
    failed = [t for t in report.get("thresholds") or [] if not t.get("passed")]
    if failed:
        lines.append(f"- :x: {len(failed)} threshold check(s) failed")
    lines.extend(f"- Data: {md_escape(n)}" for n in report.get("data_notes") or [])
    return lines


def render_markdown(report: Mapping[str, Any]) -> str:
    """The Markdown report text (ends with a newline)."""
    title = md_escape(report.get("title") or report.get("eval") or "eval")
    out = [f"## {title}: factorial evaluation report", "", *_headline(report), ""]
    for t in all_tables(report):
        if t.key == "grid":
            out += ["<details><summary>" + html.escape(t.title) + "</summary>", "", *md_table(t),
                    "", "</details>", ""]
            continue
        if t.key == "pairwise" and not t.rows:
            continue
        out += [f"### {md_escape(t.title)}", "", *md_table(t), ""]
    if report.get("generated_at"):
        out.append(f"<sub>generated {md_escape(report['generated_at'])} by eval_harness</sub>")
    # control / bidi / zero-width characters from run data made visible (textsafe)
    return safe_text("\n".join(out).rstrip()) + "\n"
