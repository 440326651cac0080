"""HTML sections: headline, tables (the console's, shared via ``reports.tables``), charts.

Every string that reaches the page passes through :func:`esc` (``html.escape``) exactly
once; the only unescaped fragments are our own tags and matplotlib's SVG (which escapes
its text itself, see ``html.svg``).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

from eval_harness.reports import fmt
from eval_harness.reports.html.svg import Chart
from eval_harness.reports.table_model import TextTable
from eval_harness.reports.tables_compare import comparison_findings

_WORDS = re.compile(r"[A-Za-z][A-Za-z -]{0,18}")  # verdict-like cells get a CSS class


def esc(text: Any) -> str:
    """HTML-escape any value (quotes included)."""
    return html.escape("" if text is None else str(text), quote=True)


def _title(tip: str) -> str:
    return f' title="{esc(tip)}"' if tip else ""


def table_html(t: TextTable) -> str:
    """A table (or its empty message) plus notes; compact cells carry their full text
    (e.g. every level of a condition) in a ``title`` attribute."""
    parts = [f'<h3 id="{esc(t.key)}">{esc(t.title)}</h3>']
    if not t.rows:
        parts.append(f'<p class="na">{esc(t.empty)}</p>')
    else:
        ctips = t.column_tips or [""] * len(t.columns)
        head = "".join(f"<th{_title(tip)}>{esc(c)}</th>" for c, tip in zip(t.columns, ctips, strict=True))
        body = []
        for n, row in enumerate(t.rows):
            tips = t.tips[n] if n < len(t.tips) else [""] * len(row)
            cells = []
            for cell, al, tip in zip(row, t.align, tips, strict=True):
                cls = ["r"] if al == "r" else []
                if _WORDS.fullmatch(cell):
                    # The whole cell names the class: "cases regressed" is not "regressed".
                    cls.append("v-" + cell.replace(" ", "-"))
                cls_attr = f' class="{" ".join(cls)}"' if cls else ""
                cells.append(f"<td{cls_attr}{_title(tip)}>{esc(cell)}</td>")
            body.append("<tr>" + "".join(cells) + "</tr>")
        parts.append(f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead>'
                     f'<tbody>{"".join(body)}</tbody></table></div>')
    parts += [f'<p class="note">{esc(n)}</p>' for n in t.notes]
    return "\n".join(parts)


def chart_html(title: str, chart: Chart | None, caption: str = "") -> str:
    """A titled chart, its fixed caption and its data-dependent notes (label legend, sort
    order, axis scale), or "not available"."""
    if chart is None:
        return f'<h3>{esc(title)}</h3>\n<p class="na">{esc(fmt.NOT_AVAILABLE)}</p>'
    text = "; ".join(t for t in (caption, *chart.notes) if t)
    cap = f'<p class="note">{esc(text)}</p>' if text else ""
    return f"<h3>{esc(title)}</h3>\n{chart.svg}\n{cap}"


def headline_html(report: Mapping[str, Any]) -> str:
    """Title, design line and the key findings as a list."""
    design = report.get("design") or {}
    conds = report.get("conditions") or []
    items: list[str] = []
    terms = (report.get("anova") or {}).get("terms") or []
    sig = [t for t in terms if t.get("significant") is True]
    if not terms:
        items.append("ANOVA: not available")
    elif sig:
        items += [f"{t['term']} is significant (p adj {fmt.pval(t.get('p_adjusted'))}, "
                  f"partial η² {fmt.f3(t.get('partial_eta_sq'), 2)})" for t in sig]
    else:
        items.append("no term is significant after correction")
    best = max((c for c in conds if fmt.is_num(c.get("mean"))), key=lambda c: c["mean"],
               default=None)
    if best:
        items.append(f"highest mean composite: {best.get('short_label') or best['label']} "
                     f"({fmt.est_ci(best['mean'], best.get('ci'))})")
    items += [text for _, text in comparison_findings(report)]
    failed = [t for t in report.get("thresholds") or [] if not t.get("passed")]
    if failed:
        items.append(f"{len(failed)} threshold check(s) failed")
    line = (f"{len(conds)} conditions × {design.get('n_cases', '?')} cases × "
            f"{design.get('replications', '?')} replications · response "
            f"{report.get('response')} · correction {report.get('correction')} · "
            f"α = {report.get('alpha')}")
    lis = "".join(f"<li>{esc(i)}</li>" for i in items)
    rule = (f'<p class="muted pass-rule">pass rule: {esc(report["pass_rule"])}</p>\n'
            if report.get("pass_rule") else "")
    return (f"<h1>{esc(report.get('title') or report.get('eval') or 'eval')}</h1>\n<p class=\"muted\">{esc(line)}</p>\n"
            f'{rule}<ul class="headline">{lis}</ul>')
