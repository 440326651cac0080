"""Single-file HTML report: inline SVG charts, tables, per-case drill-down; no scripts,
no network (see ``templates.CSP``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from eval_harness.reports.html.charts import all_charts
from eval_harness.reports.html.drilldown import drilldown_html
from eval_harness.reports.html.sections import chart_html, esc, headline_html, table_html
from eval_harness.reports.html.templates import page
from eval_harness.reports.tables import all_tables

NAV = [("charts", "Charts"), ("tables", "Tables"), ("grid-all", "All cases"),
       ("drilldown", "Per case")]


#: the "All cases" table: at most this many cells (case × condition), and 100 to 1,000 rows
GRID_CELLS = 16_000
GRID_ROWS = (100, 1_000)


def grid_rows(report: Mapping[str, Any]) -> int:
    """Rows of the "All cases" table: 1,000 up to 16 conditions, fewer with more
    conditions (never under 100), so the page stays a few hundred KB at any scale."""
    n_cond = max(len((report.get("case_grid") or {}).get("condition_ids") or []), 1)
    return min(GRID_ROWS[1], max(GRID_ROWS[0], GRID_CELLS // n_cond))


def render_html(report: Mapping[str, Any], *, frame: pd.DataFrame,
                runs_root: Path | Sequence[Path] | None = None) -> str:
    """The whole HTML document for a report model."""
    charts = all_charts(report)
    nav = "".join(f'<a href="#{k}">{esc(v)}</a>' for k, v in NAV)
    body = [headline_html(report), f"<nav>{nav}</nav>", '<h2 id="charts">Charts</h2>',
            chart_html("Mean composite per condition", charts["means"],
                       "dots: mean over cases; bars: 95% t interval over cases; best on top"),
            chart_html("Main effects", charts["main_effects"],
                       "marginal means per level (averaged over the other factors), 95% CIs; "
                       "levels in matrix order"),
            chart_html("Interactions", charts["interactions"],
                       "non-parallel lines suggest an interaction; see the ANOVA table"),
            chart_html("Cases × conditions", charts["heatmap"], "colour: mean composite"),
            chart_html("Cost and quality", charts["pareto"],
                       "frontier: no other condition is at most as costly and at least as good"),
            '<h2 id="tables">Tables</h2>']
    tables = all_tables(report)
    body += [table_html(t) for t in tables]
    body.append('<h2 id="grid-all">All cases</h2>')
    from eval_harness.reports.tables import grid_table

    full = grid_table(report, show_all=True, limit=grid_rows(report))
    full.key, full.title = "grid-all-table", "Every case × condition"
    body.append(table_html(full))
    body.append('<h2 id="drilldown">Per case</h2>')
    body.append(drilldown_html(report, frame, runs_root))
    issues = report.get("issues") or []
    if issues:
        body.append("<h2>Data issues</h2><ul>" + "".join(
            f"<li>{esc(i.get('kind'))}: {esc(i.get('detail'))}</li>" for i in issues) + "</ul>")
    stamp = f" · generated {report['generated_at']}" if report.get("generated_at") else ""
    body.append(f"<footer>eval_harness report (schema {report.get('schema_version')}){esc(stamp)}"
                "</footer>")
    return page(f"{report.get('title') or report.get('eval') or 'eval'} — eval_harness report", "\n".join(body))
