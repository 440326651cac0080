"""Console rendering of a dry-run summary."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

MAX_ROWS = 200
#: cells of a ``--dry-run --shard`` listed on the console (all of them in --json)
SHARD_CELLS_SHOWN = 20


def _money(x: float | None) -> str:
    return "unknown" if x is None else f"${x:,.2f}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def render_dry_run(summary: dict[str, Any], console: Console | None = None) -> None:
    """Print the grid, totals, estimates and warnings. Every user string (eval name, factor
    names, levels, warnings quoting them) is escaped: `[/oops]` is a level, not markup."""
    console = console or Console(highlight=False)
    factors = list(summary["factors"])
    table = Table(title=Text(f"{summary['eval']}: {summary['n_conditions']} conditions"),
                  show_lines=False)
    table.add_column("condition_id", style="cyan", no_wrap=True)
    for f in factors:
        table.add_column(Text(str(f)))
    table.add_column("runs", justify="right")
    for cond in summary["conditions"][:MAX_ROWS]:
        table.add_row(cond["condition_id"], *(Text(str(cond["levels"][f])) for f in factors),
                      f"{cond['runs']:,}")
    console.print(table)
    hidden = summary["n_conditions"] - MAX_ROWS
    if hidden > 0:
        console.print(f"... and {hidden:,} more conditions (use --json for all)")
    console.print(
        f"[bold]{summary['n_conditions']:,} conditions × {summary['n_cases']:,} cases × "
        f"{summary['replications']} replications = {summary['total_runs']:,} runs[/bold]; "
        f"LLM judge calls: {summary['judge_calls']:,}"
    )
    if summary.get("pass_rule"):
        console.print(Text(f"pass rule: {summary['pass_rule']}"))
    shard = summary.get("shard")
    if shard:
        _render_shard(console, shard)
    est = summary["estimate"]
    if est["cost_kind"] == "point":
        line = f"estimated cost: {_money(est['cost_usd'])} ({est['cost_source']})"
        if est.get("upper_bound_usd") is not None:
            line += f"; upper bound {_money(est['upper_bound_usd'])}"
    elif est["cost_kind"] == "upper-bound":
        line = f"cost upper bound: {_money(est['upper_bound_usd'])} ({est['cost_source']})"
    else:
        line = "cost: unknown (pass --avg-cost-per-run or set execution.max_budget_usd)"
    console.print(line)
    _print_table_estimate(console, est.get("table"))
    if est.get("time_s") is not None:
        console.print(f"estimated time: {_duration(est['time_s'])} at the chosen concurrency")
    power = summary.get("power")
    if power:
        console.print(f"power: {escape(str(power.get('text', power)))}")
    for warning in summary["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {escape(str(warning))}")
    console.print("[green]valid[/green]: nothing was run")


def _print_table_estimate(console: Console, table: dict[str, Any] | None) -> None:
    """Per condition and per judge: point and upper bound (price table × tokens)."""
    if not table:
        return
    grid = Table(title=Text(f"cost by price table ({table['price_table_date']})"))
    for col in ("condition / judge", "model", "tokens from", "point", "upper bound"):
        grid.add_column(col, justify="right" if col in ("point", "upper bound") else "left")
    rows = table["conditions"][:MAX_ROWS] + table["judges"]
    for row in rows:
        name = row.get("label") or row.get("condition_id") or f"judge {row.get('judge')}"
        grid.add_row(Text(str(name)), Text(str(row["model"])), row["tokens"],
                     _money(row["point_usd"]), _money(row["upper_usd"]))
    grid.add_row("total", "", "", _money(table["point_usd"]), _money(table["upper_usd"]))
    console.print(grid)
    if table.get("judges_share") is not None:
        console.print(f"judges' share of the point estimate: {table['judges_share']:.0%}")
    if table["unpriced_models"]:
        names = ", ".join(table["unpriced_models"])
        console.print(f"[yellow]no price for[/yellow] {escape(names)}: add them under "
                      "`pricing:` (USD per 1M tokens) for a complete estimate")


def _render_shard(console: Console, shard: dict[str, Any]) -> None:
    """``--dry-run --shard K/N``: the shard's size, what is left of it, and its cells."""
    console.print(
        f"[bold]shard {shard['shard']}: {shard['runs']:,} runs[/bold], {shard['to_run']:,} to "
        f"run ({shard['skipped_complete']:,} complete, {shard['skipped_errored']:,} errored "
        f"kept, {shard['stale_rerun']:,} stale rerun), over {len(shard['cases']):,} cases "
        f"and {len(shard['to_run_per_condition']):,} conditions")
    if shard.get("note"):
        console.print(f"[yellow]note:[/yellow] {escape(shard['note'])}")
    cells = shard["cells"]
    for cell in cells[:SHARD_CELLS_SHOWN]:
        console.print(f"  {cell['condition_id']}  {escape(str(cell['case_id']))}"
                      f"  r{cell['replication']}")
    if len(cells) > SHARD_CELLS_SHOWN:
        console.print(f"  ... and {len(cells) - SHARD_CELLS_SHOWN:,} more cells (--json lists all)")
