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
from eval_harness.reports.tables import TextTable

_CLASS_SAFE = re.compile(r"[^A-Za-z0-9_-]")


def esc(text: Any) -> str:
    """HTML-escape any value (quotes included)."""
    return html.escape("" if text is None else str(text), quote=True)


def table_html(t: TextTable) -> str:
    """A table (or its empty message) plus notes."""
    parts = [f'<h3 id="{esc(t.key)}">{esc(t.title)}</h3>']
    if not t.rows:
        parts.append(f'<p class="na">{esc(t.empty)}</p>')
    else:
        head = "".join(f"<th>{esc(c)}</th>" for c in t.columns)
        body = []
        for row in t.rows:
            cells = []
            for cell, al in zip(row, t.align, strict=True):
                cls = ["r"] if al == "r" else []
                if cell and len(cell) < 20:
                    cls.append("v-" + _CLASS_SAFE.sub("", cell.split(" ")[-1]))
                cls_attr = f' class="{" ".join(cls)}"' if cls else ""
                cells.append(f"<td{cls_attr}>{esc(cell)}</td>")
            body.append("<tr>" + "".join(cells) + "</tr>")
        parts.append(f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead>'
                     f'<tbody>{"".join(body)}</tbody></table></div>')
    parts += [f'<p class="note">{esc(n)}</p>' for n in t.notes]
    return "\n".join(parts)


def chart_html(title: str, svg: str | None, caption: str = "") -> str:
    """A titled chart figure, or "not available"."""
    inner = svg if svg else f'<p class="na">{esc(fmt.NOT_AVAILABLE)}</p>'
    cap = f'<p class="note">{esc(caption)}</p>' if caption else ""
    return f"<h3>{esc(title)}</h3>\n{inner}\n{cap}"


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
        items.append(f"highest mean composite: {best['label']} "
                     f"({fmt.f3(best['mean'])} {fmt.ci(best.get('ci'))})")
    for c in report.get("comparisons") or []:
        if c.get("verdict") == "regressed":
            items.append(f"regressed: {c.get('candidate')} vs {c.get('reference')} "
                         f"({', '.join(c.get('regressed') or []) or 'overall drop'})")
    failed = [t for t in report.get("thresholds") or [] if not t.get("passed")]
    if failed:
        items.append(f"{len(failed)} threshold check(s) failed")
    line = (f"{len(conds)} conditions × {design.get('n_cases', '?')} cases × "
            f"{design.get('replications', '?')} replications · response "
            f"{report.get('response')} · correction {report.get('correction')} · "
            f"α = {report.get('alpha')}")
    lis = "".join(f"<li>{esc(i)}</li>" for i in items)
    return (f"<h1>{esc(report.get('eval') or 'eval')}</h1>\n<p class=\"muted\">{esc(line)}</p>\n"
            f'<ul class="headline">{lis}</ul>')
